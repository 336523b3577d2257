// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-test-caps: what this machine offers the tests (tests/caps/caps.h),
 * for the native tests (kv_need in tests/native/lib.sh) and the harness
 * (tests/harness/mkinitramfs.sh writes its list into the QEMU host, whose
 * native cases run exactly the tests this machine could not).
 *
 *   kvmlu-test-caps           one line per capability: "NAME yes" or
 *                             "NAME no: WHY"
 *   kvmlu-test-caps NAME...   exit 0 if this machine has them all, else 1
 *                             with one line "NAME: WHY" per missing one
 *
 * Exit 2: an unknown NAME (the list names them). A test tool: not in any
 * package, no project library.
 */
#include <stdio.h>

#include "tests/caps/caps.h"

#define NPROBES (sizeof(caps_probes) / sizeof(caps_probes[0]))

int main(int argc, char **argv)
{
	char why[256];
	size_t i;
	int r, missing = 0;

	if (argc == 1) {
		for (i = 0; i < NPROBES; i++) {
			why[0] = '\0';
			if (caps_probes[i].have(why, sizeof(why)))
				printf("%s yes\n", caps_probes[i].name);
			else
				printf("%s no: %s\n", caps_probes[i].name, why);
		}
		return 0;
	}
	for (r = 1; r < argc; r++) {
		why[0] = '\0';
		switch (caps_have(argv[r], why, sizeof(why))) {
		case 1:
			break;
		case 0:
			printf("%s: %s\n", argv[r], why);
			missing = 1;
			break;
		default:
			fprintf(stderr, "kvmlu-test-caps: %s; known:", why);
			for (i = 0; i < NPROBES; i++)
				fprintf(stderr, " %s", caps_probes[i].name);
			fprintf(stderr, "\n");
			return 2;
		}
	}
	return missing;
}

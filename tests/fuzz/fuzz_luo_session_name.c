// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: LUO session names, which come from users (`kvmlu-vmm
 * restore --session`) and from journals read after a kexec. Any byte
 * string must be either refused with a message or accepted as a name the
 * kernel takes (shorter than LUO_SESSION_NAME_SIZE, "kvmlu/vm/" prefix,
 * safe characters), and luo_session_vm_name() must agree with the check.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/luo_session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], built[LUO_SESSION_NAME_SIZE];
	char *name = malloc(size + 1);
	const char *vm;
	int ok;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	err[0] = '\0';
	ok = luo_session_name_check(name, err, sizeof(err)) == 0;
	vm = luo_session_vm_name(name);
	if (ok != (vm != NULL))
		abort();
	if (!ok && !err[0])
		abort();
	if (ok) {
		if (strlen(name) >= LUO_SESSION_NAME_SIZE || strncmp(name, LUO_SESSION_VM_PREFIX, 9))
			abort();
		for (const char *p = vm; *p; p++)
			if (*p == '/' || (unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
				abort();
		/* Building the name back from the VM part gives the same string. */
		if (luo_session_name_for_vm(vm, built, err, sizeof(err)) || strcmp(built, name))
			abort();
	}
	free(name);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the kexec marker parser (agent/journal/kexec_marker.c),
 * which after a kexec reads whatever history_dir/kexec-pending holds. It
 * must refuse or accept without crashing, and what it accepts must
 * serialize and parse back to the same marker.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/journal/kexec_marker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kexec_marker m, back;
	char err[256], *text;
	size_t len;

	memset(&m, 0, sizeof(m));
	if (kexec_marker_parse((const char *)data, size, &m, err, sizeof(err)))
		return 0;
	if (kexec_marker_serialize(&m, &text, &len))
		abort();
	memset(&back, 0, sizeof(back));
	if (kexec_marker_parse(text, len, &back, err, sizeof(err)) || memcmp(&m, &back, sizeof(m)))
		abort();
	free(text);
	return 0;
}

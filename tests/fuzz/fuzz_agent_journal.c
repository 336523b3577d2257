// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the agent's journal parser (agent/journal/journal_json.c), which
 * after a kexec reads whatever the LUO session or state_dir holds. It must
 * refuse or accept without crashing, and what it accepts must serialize
 * and parse back to the same journal.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/journal/journal_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct journal j, back;
	char err[256], *text;
	size_t len;

	memset(&j, 0, sizeof(j));
	if (journal_parse((const char *)data, size, &j, err, sizeof(err)))
		return 0;
	if (journal_serialize(&j, &text, &len))
		abort();
	memset(&back, 0, sizeof(back));
	if (journal_parse(text, len, &back, err, sizeof(err)) || memcmp(&j, &back, sizeof(j)))
		abort();
	free(text);
	return 0;
}

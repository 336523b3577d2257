// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the in-place classifier (agent/libvirt/libvirt_ram_class.c)
 * on a domain's XML, as virDomainGetXMLDesc gives it. It must refuse or
 * judge without crashing or leaking; a refusal has a message and no
 * reasons, a judgement only known reasons, and the journal's words for
 * any verdict fit their buffer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/libvirt/libvirt_ram_class.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum lvram_started st = size ? (enum lvram_started)(data[0] % 3) : LVRAM_STARTED_UNKNOWN;
	unsigned int reasons;
	char err[256], text[384];
	int ret;

	err[0] = '\0';
	ret = lvram_classify((const char *)data, size, st, &reasons, err, sizeof(err));
	if (ret) {
		if ((ret != -EINVAL && ret != -EMSGSIZE) || reasons || !err[0])
			abort();
		lvram_plan_text(true, 0, err, text, sizeof(text));
	} else {
		if (reasons >> LVRAM_NR_REASONS)
			abort();
		if (st == LVRAM_STARTED_WRAPPER && (reasons & (LVRAM_NOT_WRAPPER | LVRAM_NOT_STARTED)))
			abort();
		lvram_plan_text(false, reasons, NULL, text, sizeof(text));
	}
	if (strlen(text) >= sizeof(text))
		abort();
	return 0;
}

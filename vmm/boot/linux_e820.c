// SPDX-License-Identifier: GPL-2.0
/* e820 map from the guestmem layout: see linux_e820.h. */
#include <errno.h>

#include "common/err.h"
#include "vmm/boot/linux_e820.h"
#include "vmm/boot/linux_layout.h"

struct e820_builder {
	struct boot_e820_entry *tab;
	unsigned int max, nr;
};

static int e820_add(struct e820_builder *b, uint64_t start, uint64_t end, uint32_t type)
{
	if (end <= start)
		return 0;
	if (b->nr == b->max)
		return -ENOSPC;
	b->tab[b->nr].addr = start;
	b->tab[b->nr].size = end - start;
	b->tab[b->nr].type = type;
	b->nr++;
	return 0;
}

/* The part of [start, end) that lies in [lo, hi) as RAM of this type. */
static int e820_add_clipped(struct e820_builder *b, uint64_t start, uint64_t end,
			    uint64_t lo, uint64_t hi, uint32_t type)
{
	uint64_t s = start > lo ? start : lo, e = end < hi ? end : hi;

	return s < e ? e820_add(b, s, e, type) : 0;
}

int linux_e820_build(const struct guestmem *gm, struct boot_e820_entry *tab,
		     unsigned int max, unsigned int *nr, char *err, size_t errlen)
{
	struct e820_builder b = { .tab = tab, .max = max, .nr = 0 };
	uint64_t prev_end = 0;
	unsigned int i;
	int rc = 0;

	if (!gm || !tab || !nr)
		return kvmlu_err(err, errlen, -EINVAL, "e820: no layout");
	if (!gm->nr || gm->r[0].gpa != 0 || gm->r[0].size < LINUX_HIGH_MEM_START)
		return kvmlu_err(err, errlen, -EINVAL,
				 "e820: Linux needs RAM from 0 to 1 MiB in the first region (it starts at %#llx, %llu bytes)",
				 gm->nr ? (unsigned long long)gm->r[0].gpa : 0ULL,
				 gm->nr ? (unsigned long long)gm->r[0].size : 0ULL);
	for (i = 0; i < gm->nr && !rc; i++) {
		uint64_t s = gm->r[i].gpa, e = s + gm->r[i].size;

		if (e <= s || (i && s < prev_end))
			return kvmlu_err(err, errlen, -EINVAL,
					 "e820: region %u [%#llx, %#llx) is empty, wraps or overlaps the one before",
				       i, (unsigned long long)s, (unsigned long long)e);
		prev_end = e;
		/* Base memory up to the EBDA, then its reserved KiB. */
		rc = e820_add_clipped(&b, s, e, 0, LINUX_EBDA_START, LINUX_E820_RAM);
		if (!rc)
			rc = e820_add_clipped(&b, s, e, LINUX_EBDA_START, 0xa0000,
					      LINUX_E820_RESERVED);
		/* VGA and option ROMs (0xa0000-0xf0000) are simply absent. */
		if (!rc)
			rc = e820_add_clipped(&b, s, e, LINUX_BIOS_START, LINUX_HIGH_MEM_START,
					      LINUX_E820_RESERVED);
		if (!rc)
			rc = e820_add_clipped(&b, s, e, LINUX_HIGH_MEM_START, UINT64_MAX,
					      LINUX_E820_RAM);
	}
	if (rc)
		return kvmlu_err(err, errlen, rc, "e820: more than %u entries", max);
	*nr = b.nr;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Guest physical memory plan: where a VM's RAM sits in its address space,
 * plus the parsers for what the user types (--memory 2G,
 * --memory-backend guest_memfd).
 *
 * Lifecycle: guestmem_layout() runs once when a VM is first created; the
 * plan (gpa, size, slot of each region) is then recorded in the state FDT
 * and never recomputed, so after an upgrade or a kexec the new process uses
 * the recorded plan even if a newer binary would lay memory out
 * differently. Nothing here touches files or KVM.
 */
#include <errno.h>
#include <string.h>

#include "guestmem/guestmem.h"


int guestmem_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0, mult = 1;
	const char *p = s;

	if (!s || !out)
		return -EINVAL;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	switch (*p) {
	case '\0':
		break;
	case 'K': case 'k':
		mult = 1ULL << 10;
		break;
	case 'M': case 'm':
		mult = 1ULL << 20;
		break;
	case 'G': case 'g':
		mult = 1ULL << 30;
		break;
	case 'T': case 't':
		mult = 1ULL << 40;
		break;
	default:
		return -EINVAL;
	}
	if (*p && p[1] != '\0')
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	v *= mult;
	if (v == 0 || v % GUESTMEM_SIZE_ALIGN)
		return -EINVAL;
	*out = v;
	return 0;
}

static const char *const guestmem_backend_names[] = {
	[GUESTMEM_MEMFD] = "memfd",
	[GUESTMEM_GUEST_MEMFD] = "guest_memfd",
};

int guestmem_backend_parse(const char *s, enum guestmem_backend *out)
{
	size_t i;

	if (!s || !out)
		return -EINVAL;
	for (i = 0; i < sizeof(guestmem_backend_names) / sizeof(guestmem_backend_names[0]); i++) {
		if (!strcmp(s, guestmem_backend_names[i])) {
			*out = (enum guestmem_backend)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *guestmem_backend_name(enum guestmem_backend b)
{
	if ((unsigned int)b >= sizeof(guestmem_backend_names) / sizeof(guestmem_backend_names[0]))
		return "unknown";
	return guestmem_backend_names[b];
}

static void guestmem_region_plan(struct guestmem_region *r, uint64_t gpa,
				 uint64_t size, uint32_t slot)
{
	memset(r, 0, sizeof(*r));
	r->gpa = gpa;
	r->size = size;
	r->fd = -1;
	r->slot = slot;
}

int guestmem_layout(uint64_t ram_size, struct guestmem *gm)
{
	uint64_t low;

	if (!gm)
		return -EINVAL;
	if (ram_size == 0 || ram_size % GUESTMEM_SIZE_ALIGN)
		return -EINVAL;
	if (ram_size > GUESTMEM_MAX_RAM)
		return -E2BIG;

	memset(gm, 0, sizeof(*gm));
	gm->total = ram_size;

	/*
	 * Below 4 GiB, [3 GiB, 4 GiB) is left free for the PCI/MMIO hole
	 * (LAPIC, IOAPIC, firmware); RAM that does not fit under it goes
	 * above 4 GiB, as on real x86 machines.
	 */
	low = ram_size < GUESTMEM_LOW_RAM_END ? ram_size : GUESTMEM_LOW_RAM_END;
	guestmem_region_plan(&gm->r[gm->nr], 0, low, gm->nr);
	gm->nr++;
	if (ram_size > low) {
		guestmem_region_plan(&gm->r[gm->nr], GUESTMEM_HIGH_RAM_START,
				     ram_size - low, gm->nr);
		gm->nr++;
	}
	return 0;
}

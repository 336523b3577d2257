/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The e820 memory map a Linux guest gets in its zero page, derived from
 * the guestmem layout (RAM below 3 GiB, then from 4 GiB): every guestmem
 * region is RAM except the legacy holes under 1 MiB (EBDA, VGA, BIOS),
 * and the parts of those holes where kvmlu keeps tables Linux reads after
 * boot (the MP table) are reported reserved.
 *
 * Lifecycle: built once at first boot. The guest keeps its copy; after an
 * upgrade or kexec the layout is the recorded one, so the map still holds.
 */
#ifndef KVMLU_VMM_LINUX_E820_H
#define KVMLU_VMM_LINUX_E820_H

#include <stddef.h>

#include <asm/bootparam.h>

#include "guestmem/guestmem.h"

#define LINUX_E820_RAM		1
#define LINUX_E820_RESERVED	2

/*
 * Fill tab (room for max entries) in ascending address order, no overlaps.
 * *nr gets the count. -EINVAL for a layout without RAM at 0 (Linux needs
 * its low memory) or with overlapping/unsorted regions, -ENOSPC if max is
 * too small.
 */
int linux_e820_build(const struct guestmem *gm, struct boot_e820_entry *tab,
		     unsigned int max, unsigned int *nr, char *err, size_t errlen);

#endif /* KVMLU_VMM_LINUX_E820_H */

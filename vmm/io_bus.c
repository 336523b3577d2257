// SPDX-License-Identifier: GPL-2.0
/*
 * Port I/O and MMIO dispatch (see io_bus.h). Called from every vCPU's
 * KVM_RUN loop on each I/O exit, so it stays a short linear scan over a
 * handful of ranges: an exit already costs ~110 us on the hosts here.
 */
#include <errno.h>
#include <string.h>

#include "vmm/io_bus.h"

void io_bus_init(struct io_bus *bus)
{
	memset(bus, 0, sizeof(*bus));
}

static bool io_range_overlaps(const struct io_range *r, uint64_t base, uint64_t len)
{
	return base < r->base + r->len && r->base < base + len;
}

int io_bus_register(struct io_bus *bus, enum io_space space, uint64_t base,
		    uint64_t len, const struct io_dev_ops *ops, void *dev,
		    const char *name)
{
	struct io_range *tab = space == IO_SPACE_PIO ? bus->pio : bus->mmio;
	unsigned int *nr = space == IO_SPACE_PIO ? &bus->nr_pio : &bus->nr_mmio;
	unsigned int i;

	if (space != IO_SPACE_PIO && space != IO_SPACE_MMIO)
		return -EINVAL;
	if (!len || base + len < base || !ops)
		return -EINVAL;
	if (space == IO_SPACE_PIO && base + len > 0x10000)
		return -EINVAL;
	for (i = 0; i < *nr; i++)
		if (io_range_overlaps(&tab[i], base, len))
			return -EEXIST;
	if (*nr >= IO_BUS_MAX_RANGES)
		return -ENOSPC;
	tab[*nr] = (struct io_range){ base, len, ops, dev, name };
	(*nr)++;
	return 0;
}

int io_bus_unregister(struct io_bus *bus, enum io_space space, uint64_t base,
		      struct io_range *out)
{
	struct io_range *tab = space == IO_SPACE_PIO ? bus->pio : bus->mmio;
	unsigned int *nr = space == IO_SPACE_PIO ? &bus->nr_pio : &bus->nr_mmio;

	if (space != IO_SPACE_PIO && space != IO_SPACE_MMIO)
		return -EINVAL;
	for (unsigned int i = 0; i < *nr; i++) {
		if (tab[i].base != base)
			continue;
		*out = tab[i];
		memmove(&tab[i], &tab[i + 1], (*nr - i - 1) * sizeof(tab[0]));
		(*nr)--;
		return 0;
	}
	return -ENOENT;
}

bool io_bus_access(struct io_bus *bus, enum io_space space, uint64_t addr,
		   uint8_t *data, unsigned int len, bool is_write)
{
	const struct io_range *tab;
	unsigned int i, nr;

	if (space != IO_SPACE_PIO && space != IO_SPACE_MMIO)
		return false;
	tab = space == IO_SPACE_PIO ? bus->pio : bus->mmio;
	nr = space == IO_SPACE_PIO ? bus->nr_pio : bus->nr_mmio;
	if (len && len <= IO_BUS_MAX_ACCESS && addr + len > addr) {
		for (i = 0; i < nr; i++) {
			const struct io_range *r = &tab[i];

			/* Entirely inside, or nobody gets it: a device never sees a straddling access. */
			if (addr < r->base || addr - r->base > r->len - len || len > r->len)
				continue;
			if (is_write) {
				if (r->ops->write)
					r->ops->write(r->dev, addr - r->base, data, len);
			} else {
				if (r->ops->read)
					r->ops->read(r->dev, addr - r->base, data, len);
				else
					memset(data, 0xff, len);
			}
			return true;
		}
	}
	if (is_write) {
		atomic_fetch_add_explicit(&bus->stats[space].unhandled_writes, 1,
					  memory_order_relaxed);
	} else {
		memset(data, 0xff, len < IO_BUS_MAX_ACCESS ? len : IO_BUS_MAX_ACCESS);
		atomic_fetch_add_explicit(&bus->stats[space].unhandled_reads, 1,
					  memory_order_relaxed);
	}
	return false;
}

unsigned long io_bus_unhandled(const struct io_bus *bus, enum io_space space,
			       bool is_write)
{
	if (space != IO_SPACE_PIO && space != IO_SPACE_MMIO)
		return 0;
	return is_write ? atomic_load(&bus->stats[space].unhandled_writes)
			: atomic_load(&bus->stats[space].unhandled_reads);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VM's port I/O and MMIO address spaces as seen by the VMM: a small
 * table of device ranges, filled while the VM is built and read-only once
 * vCPUs run (so lookups take no lock; devices lock themselves). An access
 * must lie entirely inside one range to reach its device. Anything else
 * is answered here: reads return all-ones, writes are dropped, and both
 * are counted, so a guest poking at random ports can neither crash nor
 * hang the VMM.
 */
#ifndef KVMLU_VMM_IO_BUS_H
#define KVMLU_VMM_IO_BUS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define IO_BUS_MAX_RANGES 16
#define IO_BUS_MAX_ACCESS 8	/* bytes: MMIO exits carry up to 8 */

enum io_space {
	IO_SPACE_PIO = 0,
	IO_SPACE_MMIO = 1,
};

/*
 * A device callback: offset is relative to the range's base, len is 1, 2,
 * 4 or 8 and offset+len never passes the range's end.
 */
struct io_dev_ops {
	void (*read)(void *dev, uint64_t offset, uint8_t *data, unsigned int len);
	void (*write)(void *dev, uint64_t offset, const uint8_t *data, unsigned int len);
};

struct io_range {
	uint64_t base;
	uint64_t len;
	const struct io_dev_ops *ops;
	void *dev;
	const char *name;
};

struct io_bus_stats {
	atomic_ulong unhandled_reads;
	atomic_ulong unhandled_writes;
};

struct io_bus {
	struct io_range pio[IO_BUS_MAX_RANGES];
	struct io_range mmio[IO_BUS_MAX_RANGES];
	unsigned int nr_pio, nr_mmio;
	struct io_bus_stats stats[2];	/* per enum io_space */
};

void io_bus_init(struct io_bus *bus);

/*
 * Add [base, base+len) to a space. -EINVAL for an empty or wrapping range
 * or one over 0xffff in PIO, -EEXIST if it overlaps a registered one,
 * -ENOSPC when the table is full.
 */
int io_bus_register(struct io_bus *bus, enum io_space space, uint64_t base,
		    uint64_t len, const struct io_dev_ops *ops, void *dev,
		    const char *name);

/*
 * Take the range registered at exactly base off the bus, into *out (so a
 * device that decodes around it can pass its accesses on: the PCI host's
 * 0xcf8 dword around the reset port at 0xcf9). -ENOENT if none starts there.
 * Only while the VM is built.
 */
int io_bus_unregister(struct io_bus *bus, enum io_space space, uint64_t base,
		      struct io_range *out);

/*
 * One guest access of len bytes at addr. is_write: data holds what the
 * guest wrote; else data is filled. A len of 0 or over IO_BUS_MAX_ACCESS
 * touches nothing and counts as unhandled (reads get all-ones up to
 * IO_BUS_MAX_ACCESS). Returns true if a device took it.
 */
bool io_bus_access(struct io_bus *bus, enum io_space space, uint64_t addr,
		   uint8_t *data, unsigned int len, bool is_write);

unsigned long io_bus_unhandled(const struct io_bus *bus, enum io_space space,
			       bool is_write);

#endif /* KVMLU_VMM_IO_BUS_H */

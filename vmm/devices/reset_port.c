// SPDX-License-Identifier: GPL-2.0
/* Port 0xcf9 reset control (see reset_port.h). */
#include "vmm/devices/reset_port.h"
#include "vmm/io_bus.h"

#define CF9_SYS_RST	0x02	/* hard reset when set together with RST_CPU */
#define CF9_RST_CPU	0x04	/* the 0->1 edge starts the reset */

static void reset_port_read(void *dev, uint64_t offset, uint8_t *data, unsigned int len)
{
	(void)dev;
	(void)offset;
	for (unsigned int i = 0; i < len; i++)
		data[i] = 0;
}

static void reset_port_write(void *dev, uint64_t offset, const uint8_t *data, unsigned int len)
{
	struct reset_port *rp = dev;

	(void)offset;
	if (len == 1 && (data[0] & CF9_RST_CPU) && rp->on_reset)
		rp->on_reset(rp->ctx);
}

static const struct io_dev_ops reset_port_ops = {
	.read = reset_port_read,
	.write = reset_port_write,
};

int reset_port_register(struct reset_port *rp, struct io_bus *bus,
			reset_port_fn on_reset, void *ctx)
{
	rp->on_reset = on_reset;
	rp->ctx = ctx;
	return io_bus_register(bus, IO_SPACE_PIO, RESET_PORT_CF9, 1,
			       &reset_port_ops, rp, "reset-cf9");
}

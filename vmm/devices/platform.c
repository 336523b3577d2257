// SPDX-License-Identifier: GPL-2.0
/*
 * The PC devices of one VM behind vm_platform_ops (vmm/platform.h): COM1,
 * the test port, the reset port and the i8042, made, put on the bus and
 * freed in the order the VM core always used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "vmm/devices/platform.h"
#include "vmm/io_bus.h"

static void platform_destroy(struct vm_platform *p)
{
	if (!p)
		return;
	test_port_destroy(&p->test_port);
	uart8250_destroy(&p->uart);
	i8042_destroy(&p->kbc);
	free(p);
}

static int platform_create(const struct vm_platform_args *a, struct vm_platform **out,
			   char *err, size_t errlen)
{
	struct vm_platform *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p)
		return kvmlu_err(err, errlen, -ENOMEM, "allocate the platform devices");
	p->on_reset = a->on_reset;
	p->ctx = a->ctx;
	rc = uart8250_init(&p->uart, a->serial_fd, UART8250_COM1_IRQ, a->irq_line, a->ctx);
	if (rc) {
		kvmlu_err(err, errlen, rc, "UART init: %s", strerror(-rc));
		goto fail;
	}
	rc = test_port_init(&p->test_port);
	if (rc) {
		kvmlu_err(err, errlen, rc, "test port init: %s", strerror(-rc));
		goto fail;
	}
	*out = p;
	return 0;
fail:
	platform_destroy(p);
	return rc;
}

static void on_guest_reset(void *ctx)
{
	struct vm_platform *p = ctx;
	char why[64];

	snprintf(why, sizeof(why), "guest reset (write to port %#x)", RESET_PORT_CF9);
	p->on_reset(p->ctx, why);
}

static void on_kbc_reset(void *ctx)
{
	struct vm_platform *p = ctx;
	char why[80];

	snprintf(why, sizeof(why), "guest reset (keyboard controller pulse, port %#x)",
		 I8042_CMD_PORT);
	p->on_reset(p->ctx, why);
}

static int platform_attach(struct vm_platform *p, struct io_bus *bus, char *err, size_t errlen)
{
	int rc;

	rc = uart8250_register(&p->uart, bus, 0x3f8);
	if (rc)
		return kvmlu_err(err, errlen, rc, "register COM1 at 0x3f8: %s", strerror(-rc));
	rc = test_port_register(&p->test_port, bus);
	if (rc)
		return kvmlu_err(err, errlen, rc, "register test port: %s", strerror(-rc));
	rc = reset_port_register(&p->reset, bus, on_guest_reset, p);
	if (rc)
		return kvmlu_err(err, errlen, rc, "register reset port: %s", strerror(-rc));
	rc = i8042_init(&p->kbc, on_kbc_reset, p);
	if (rc)
		return kvmlu_err(err, errlen, rc, "i8042 init: %s", strerror(-rc));
	rc = i8042_register(&p->kbc, bus);
	if (rc)
		return kvmlu_err(err, errlen, rc, "register i8042 at 0x60/0x64: %s", strerror(-rc));
	return 0;
}

static void platform_stop(struct vm_platform *p)
{
	test_port_abort(&p->test_port);
}

const struct vm_platform_ops vm_platform_ops = {
	.create = platform_create,
	.attach = platform_attach,
	.stop = platform_stop,
	.destroy = platform_destroy,
};

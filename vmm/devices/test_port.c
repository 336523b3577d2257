// SPDX-License-Identifier: GPL-2.0
/*
 * The kvmlu test port (see test_port.h). Each port is 4 bytes wide; a
 * narrower or misaligned access reads all-ones and writes nothing, so a
 * stray byte access cannot half-deliver a request.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "kvmlu/payload_abi.h"
#include "vmm/devices/test_port.h"
#include "vmm/io_bus.h"

static void test_port_read(void *dev, uint64_t offset, uint8_t *data, unsigned int len)
{
	struct test_port *tp = dev;
	uint32_t v = 0xffffffffu;

	if (offset == KVMLU_PORT_REQUEST - KVMLU_PORT_REQUEST && len == 4) {
		pthread_mutex_lock(&tp->lock);
		v = tp->pending;
		tp->pending = 0;
		pthread_mutex_unlock(&tp->lock);
	}
	memcpy(data, &v, len < 4 ? len : 4);
}

static void test_port_write(void *dev, uint64_t offset, const uint8_t *data, unsigned int len)
{
	struct test_port *tp = dev;
	uint32_t v;

	if (offset != KVMLU_PORT_RESULT - KVMLU_PORT_REQUEST || len != 4)
		return;
	memcpy(&v, data, 4);
	pthread_mutex_lock(&tp->lock);
	tp->result = v;
	tp->results++;
	pthread_cond_broadcast(&tp->cond);
	pthread_mutex_unlock(&tp->lock);
}

static const struct io_dev_ops test_port_ops = {
	.read = test_port_read,
	.write = test_port_write,
};

int test_port_init(struct test_port *tp)
{
	pthread_condattr_t ca;
	int err;

	memset(tp, 0, sizeof(*tp));
	err = pthread_mutex_init(&tp->lock, NULL);
	if (err)
		return -err;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&tp->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		goto err_mutex;
	return 0;
err_mutex:
	pthread_mutex_destroy(&tp->lock);
	return -err;
}

int test_port_register(struct test_port *tp, struct io_bus *bus)
{
	return io_bus_register(bus, IO_SPACE_PIO, KVMLU_PORT_REQUEST,
			       KVMLU_PORT_RESULT + 4 - KVMLU_PORT_REQUEST,
			       &test_port_ops, tp, "kvmlu-test-port");
}

int test_port_request(struct test_port *tp, uint32_t req, unsigned int timeout_ms,
		      uint32_t *result)
{
	struct timespec dl;
	uint64_t seen;
	int err = 0;

	kvmlu_deadline_ms(&dl, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&tp->lock);
	seen = tp->results;
	tp->pending |= req;
	while (tp->results == seen && !tp->aborted && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&tp->cond, &tp->lock, &dl);
	if (tp->results != seen) {
		*result = tp->result;
		err = 0;
	} else if (tp->aborted) {
		tp->pending &= ~req;
		err = ECANCELED;
	} else {
		tp->pending &= ~req;
		err = ETIMEDOUT;
	}
	pthread_mutex_unlock(&tp->lock);
	return -err;
}

void test_port_abort(struct test_port *tp)
{
	pthread_mutex_lock(&tp->lock);
	tp->aborted = true;
	pthread_cond_broadcast(&tp->cond);
	pthread_mutex_unlock(&tp->lock);
}

void test_port_destroy(struct test_port *tp)
{
	pthread_cond_destroy(&tp->cond);
	pthread_mutex_destroy(&tp->lock);
}

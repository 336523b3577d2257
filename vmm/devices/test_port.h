/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kvmlu test port (KVMLU_PORT_REQUEST / KVMLU_PORT_RESULT in
 * include/kvmlu/payload_abi.h): how the VMM asks a payload such as the
 * witness guest to do something (verify its memory) and learns the
 * outcome. The guest polls the request port, which hands over and clears
 * the pending bits; it writes the result to the result port.
 *
 * Lifecycle: init with the VM, register on the bus; the control thread
 * calls test_port_request() while vCPUs run; not part of the saved state
 * (a request in flight during an upgrade is simply answered Timeout).
 */
#ifndef KVMLU_VMM_DEVICES_TEST_PORT_H
#define KVMLU_VMM_DEVICES_TEST_PORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct io_bus;

struct test_port {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t pending;	/* KVMLU_REQ_* not yet read by the guest */
	uint32_t result;	/* last KVMLU_RESULT_*, 0 while none */
	uint64_t results;	/* results written so far */
	bool aborted;		/* VM stopping: no answer will come */
};

int test_port_init(struct test_port *tp);
int test_port_register(struct test_port *tp, struct io_bus *bus);

/*
 * Post request bits and wait up to timeout_ms for the guest to write a
 * result. 0 and *result set, or -ETIMEDOUT (the request is withdrawn),
 * or -ECANCELED once test_port_abort() was called.
 */
int test_port_request(struct test_port *tp, uint32_t req, unsigned int timeout_ms,
		      uint32_t *result);

/* The VM is stopping: wake a waiting requester and refuse new requests. */
void test_port_abort(struct test_port *tp);

void test_port_destroy(struct test_port *tp);

#endif /* KVMLU_VMM_DEVICES_TEST_PORT_H */

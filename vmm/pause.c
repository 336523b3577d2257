// SPDX-License-Identifier: GPL-2.0
/*
 * Pause and resume (see pause.h). The pausing thread sets pause_req and
 * vm->kick, then kicks every vCPU (immediate_exit + signal, see vcpu.c);
 * each vCPU thread sees kick at the top of its loop, parks, and the last
 * one to park wakes the pauser. The pauser waits with a deadline: a
 * vCPU stuck in the kernel must give the caller an error it can act on
 * (the agent rolls back), not a hung control socket.
 *
 * Unhappy paths: 1. timeout: the request is withdrawn and the parked
 * vCPUs are released, so the VM is running as before. 2. a vCPU thread
 * dies while pausing (VM stopping): the count of live threads drops and
 * the pause fails with -ESRCH.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "vmm/err.h"
#include "vmm/pause.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

static uint64_t pause_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void pause_deadline(struct timespec *dl, unsigned int ms)
{
	clock_gettime(CLOCK_MONOTONIC, dl);
	dl->tv_sec += ms / 1000;
	dl->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl->tv_nsec >= 1000000000L) {
		dl->tv_sec++;
		dl->tv_nsec -= 1000000000L;
	}
}

int vm_pause(struct vm *vm, unsigned int timeout_ms, uint64_t *ns,
	     char *err, size_t errlen)
{
	struct timespec dl;
	uint64_t t0 = pause_now_ns();
	unsigned int i;
	int rc = 0;

	*ns = 0;
	pthread_mutex_lock(&vm->lock);
	if (vm->state == VM_STATE_PAUSED) {
		pthread_mutex_unlock(&vm->lock);
		return 0;
	}
	if (vm->state != VM_STATE_RUNNING || vm->stop_req) {
		rc = vmm_err(err, errlen, -ESRCH, "pause: VM is %s, not running",
			     vm_state_name(vm->state));
		pthread_mutex_unlock(&vm->lock);
		return rc;
	}
	vm->pause_req = true;
	atomic_store(&vm->kick, 1);
	pthread_mutex_unlock(&vm->lock);

	vm_kick_vcpus(vm);

	pause_deadline(&dl, timeout_ms);
	pthread_mutex_lock(&vm->lock);
	while (vm->nr_parked < vm->nr_threads && !vm->stop_req && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&vm->cond, &vm->lock, &dl);
	if (!vm->stop_req && vm->nr_parked == vm->nr_threads) {
		vm->state = VM_STATE_PAUSED;
		pthread_mutex_unlock(&vm->lock);
		*ns = pause_now_ns() - t0;
		return 0;
	}
	if (vm->stop_req) {
		rc = vmm_err(err, errlen, -ESRCH, "pause: VM stopping (%s)",
			     vm_stop_reason_name(vm->stop_reason));
	} else {
		for (i = 0; i < vm->nr_vcpus && vm->vcpus[i].parked; i++)
			;
		rc = vmm_err(err, errlen, -ETIMEDOUT,
			     "vCPU %u not stopped after %u ms (%u of %u parked)",
			     i, timeout_ms, vm->nr_parked, vm->nr_threads);
	}
	/* Leave the VM as it was: release whoever did park. */
	vm->pause_req = false;
	atomic_store(&vm->kick, vm->stop_req ? 1 : 0);
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	return rc;
}

int vm_resume(struct vm *vm, uint64_t *ns, char *err, size_t errlen)
{
	uint64_t t0 = pause_now_ns();
	int rc;

	*ns = 0;
	pthread_mutex_lock(&vm->lock);
	if (vm->state == VM_STATE_RUNNING && !vm->stop_req) {
		pthread_mutex_unlock(&vm->lock);
		return 0;
	}
	if (vm->state != VM_STATE_PAUSED || vm->stop_req) {
		rc = vmm_err(err, errlen, -ESRCH, "resume: VM is %s",
			     vm_state_name(vm->state));
		pthread_mutex_unlock(&vm->lock);
		return rc;
	}
	vm->pause_req = false;
	atomic_store(&vm->kick, 0);
	vm->state = VM_STATE_RUNNING;
	pthread_cond_broadcast(&vm->cond);
	/* Resumed means every vCPU is on its way back into KVM_RUN. */
	while (vm->nr_parked > 0 && !vm->stop_req)
		pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
	*ns = pause_now_ns() - t0;
	return 0;
}

bool vm_vcpu_park(struct vm *vm, struct vcpu *v)
{
	bool stop;

	pthread_mutex_lock(&vm->lock);
	if (vm->pause_req && !vm->stop_req) {
		v->parked = true;
		vm->nr_parked++;
		pthread_cond_broadcast(&vm->cond);
		while (vm->pause_req && !vm->stop_req)
			pthread_cond_wait(&vm->cond, &vm->lock);
		vm->nr_parked--;
		v->parked = false;
		pthread_cond_broadcast(&vm->cond);
	}
	stop = vm->stop_req;
	pthread_mutex_unlock(&vm->lock);
	return stop;
}

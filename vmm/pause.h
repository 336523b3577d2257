/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pause and resume of a running VM: every vCPU thread out of KVM_RUN and
 * parked on the VM's condition variable, or all of them released again.
 * Used by the control socket (pause/resume, checksum needs a pause) and
 * later by state capture and update preparation, which must never see a
 * vCPU still changing memory or registers.
 */
#ifndef KVMLU_VMM_PAUSE_H
#define KVMLU_VMM_PAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;
struct vcpu;

#define VM_PAUSE_TIMEOUT_MS 2000

/*
 * Returns 0 once all vCPUs are parked (state PAUSED) with *ns the time it
 * took; 0 with *ns = 0 if already paused. -ETIMEDOUT if some vCPU did not
 * park in time (the VM is left running), -ESRCH if the VM is not running.
 */
int vm_pause(struct vm *vm, unsigned int timeout_ms, uint64_t *ns,
	     char *err, size_t errlen);

/*
 * Release the parked vCPUs; returns once every one has left its park,
 * with *ns the time that took. 0 with *ns = 0 if already running,
 * -ESRCH if the VM is stopping.
 */
int vm_resume(struct vm *vm, uint64_t *ns, char *err, size_t errlen);

/*
 * vCPU side: called by the KVM_RUN loop when vm->kick is set. Parks while
 * a pause is requested; returns true when the thread must exit.
 */
bool vm_vcpu_park(struct vm *vm, struct vcpu *v);

#endif /* KVMLU_VMM_PAUSE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One virtual machine: the KVM VM fd, its vCPUs, its RAM (libguestmem),
 * its devices and the run state every thread agrees on.
 *
 * Lifecycle (happy path): vm_create() builds the VM with no vCPU running
 * (irqchip, PIT, RAM files bound as memslots, devices on the bus, vCPUs
 * created); a boot step (boot/payload_boot.c, or a restore from saved state)
 * sets the vCPU registers; vm_start() starts one thread per vCPU;
 * vm_pause()/vm_resume() park and release them; some thread
 * calls vm_request_stop() (guest shutdown, a control command, a signal);
 * vm_join() waits for the vCPU threads; vm_destroy() closes everything.
 * A failed vm_create() leaves nothing behind.
 */
#ifndef KVMLU_VMM_VM_H
#define KVMLU_VMM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "guestmem/guestmem.h"
#include "vmm/device.h"
#include "vmm/io_bus.h"
#include "vmm/platform.h"
#include "vmm/vcpu.h"
#include "vmm/vm_stop.h"
#include "vmm/vm_virtio.h"
#include "vmm/vm_config.h"

#define VM_NAME_MAX	63
#define VM_MAX_VCPUS	64
/* Below the 4 GiB PCI hole, above any RAM (which ends at 3 GiB there). */
#define VM_TSS_ADDR		0xfffbd000ULL
#define VM_IDENTITY_MAP_ADDR	0xfffbc000ULL

enum vm_state {
	VM_STATE_CREATED = 0,	/* built, vCPUs not started */
	VM_STATE_RUNNING,
	VM_STATE_PAUSED,	/* every vCPU thread parked outside KVM_RUN */
	VM_STATE_STOPPING,	/* stop requested, threads winding down */
	VM_STATE_STOPPED,	/* all vCPU threads gone */
};

struct vm {
	char name[VM_NAME_MAX + 1];
	int kvm_fd;
	int vm_fd;
	int run_size;		/* bytes of each vCPU's kvm_run mapping */
	unsigned int nr_vcpus;
	struct vcpu *vcpus;
	struct vcpu_host vcpu_host;	/* what each of them needs of this VM */
	struct guestmem mem;
	uint64_t ram_size;
	uint64_t tsc_khz;
	struct io_bus bus;
	/* COM1, the test, reset and i8042 ports (vmm/platform.h, vmm/devices/platform.h) */
	struct vm_platform *platform;
	struct vm_virtio virtio;	/* virtio devices, in slot order (vm_virtio.h) */
	uint64_t created_ns;	/* kvmlu_mono_ns() at vm_create() */

	/*
	 * Run control. kick is the one flag the KVM_RUN loop reads on every
	 * iteration: non-zero whenever pause_req or stop_req is set, so the
	 * fast path costs one atomic load. Everything else is under lock.
	 */
	atomic_int kick;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* parks, wake-ups, thread exits */
	bool sync_made;		/* lock and cond initialised: vm_destroy may run twice */
	enum vm_state state;
	bool pause_req;
	bool stop_req;
	unsigned int nr_parked;
	unsigned int nr_threads;	/* vCPU threads still alive */
	enum vm_stop_reason stop_reason;
	char stop_msg[VM_STOP_MSG_MAX];
	int stop_efd;		/* eventfd, readable once a stop is requested */
};

int vm_create(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen);

/* Start every vCPU thread; the vCPUs must have been booted first. */
int vm_start(struct vm *vm, char *err, size_t errlen);

/*
 * vm_start() with every vCPU thread parked before its first KVM_RUN: the
 * VM is PAUSED on return and no guest instruction has run (a live
 * upgrade of a paused VM); vm_resume() lets it go.
 */
int vm_start_paused(struct vm *vm, char *err, size_t errlen);

/*
 * Ask everything to stop; the first reason given wins and is kept with
 * its message. Safe from any thread, including a vCPU thread.
 */
void vm_request_stop(struct vm *vm, enum vm_stop_reason reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Wait for all vCPU threads to finish (after vm_request_stop()). */
void vm_join(struct vm *vm);

/* Tear down; safe on a zeroed vm or after a failed vm_create(). */
void vm_destroy(struct vm *vm);

/* KVM_IRQ_LINE on the in-kernel irqchip; ctx is the struct vm. */
int vm_irq_line(void *ctx, unsigned int irq, int level);


enum vm_state vm_get_state(struct vm *vm);
const char *vm_state_name(enum vm_state s);
const char *vm_stop_reason_name(enum vm_stop_reason r);
/* ns since vm_create(). */
uint64_t vm_uptime_ns(const struct vm *vm);

/* Wake every vCPU out of KVM_RUN so it rereads vm->kick. */
void vm_kick_vcpus(struct vm *vm);

/*
 * Pause and resume of a running VM: every vCPU thread out of KVM_RUN and
 * parked on the VM's condition variable, or all of them released again.
 * The control socket's pause/resume, a checksum, state capture and update
 * preparation use it: none may see a vCPU still changing memory or
 * registers.
 */
#define VM_PAUSE_TIMEOUT_MS 2000

/*
 * Pause means quiesce: once the vCPUs are parked, every virtio request
 * the guest made available has completed (vm_virtio_quiesce()), so the
 * state captured after a pause has no request half done.
 *
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

#endif /* KVMLU_VMM_VM_H */

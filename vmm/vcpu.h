/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One vCPU: its KVM fd, the kvm_run area shared with the kernel, and the
 * thread that runs KVM_RUN in a loop and dispatches each exit.
 *
 * Lifecycle: vcpu_create() at VM creation (fd, kvm_run mapping, CPUID);
 * the boot or restore step sets registers through the wrappers below;
 * vcpu_start() starts the thread. The thread parks when the VM pauses
 * (vm_pause(), vm.c, through vcpu_host's park) and returns when it
 * stops; vcpu_destroy() after vm_join().
 */
#ifndef KVMLU_VMM_VCPU_H
#define KVMLU_VMM_VCPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "kvmlu/kvm_uapi.h"
#include "vmm/vm_stop.h"

struct io_bus;
struct vcpu;

/*
 * What a vCPU needs of the VM that runs it, filled by vm.c: the VM's fds
 * and its I/O bus, the flag that calls every vCPU out of KVM_RUN, and
 * what its thread calls on the VM (each with ctx, the struct vm).
 */
struct vcpu_host {
	int kvm_fd, vm_fd;
	int run_size;			/* bytes of each vCPU's kvm_run mapping */
	struct io_bus *bus;		/* port and MMIO exits */
	atomic_int *kick;		/* non-zero: leave KVM_RUN and call park */
	/* Park while a pause is requested; true when the thread must exit. */
	bool (*park)(void *ctx, struct vcpu *v);
	/* Stop the VM (the first reason given wins), msg saying why. */
	void (*stop)(void *ctx, enum vm_stop_reason reason, const char *msg);
	/* The thread's last act. */
	void (*exited)(void *ctx);
	void *ctx;
};

/* Taken by the kick: kvm-run loops see EINTR, nothing else reacts to it. */
#define VCPU_KICK_SIGNAL SIGUSR1

struct vcpu {
	const struct vcpu_host *host;
	unsigned int index;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool thread_started;
	bool parked;		/* under vm->lock */
	unsigned long exits;	/* KVM_RUN returns, for status */
};

/* host must outlive the vCPU. */
int vcpu_create(const struct vcpu_host *host, struct vcpu *v, unsigned int index,
		char *err, size_t errlen);
int vcpu_start(struct vcpu *v, char *err, size_t errlen);
/* Make KVM_RUN return now, or right away if the thread is about to enter it. */
void vcpu_kick(struct vcpu *v);
void vcpu_destroy(struct vcpu *v);

/* Install the no-op handler for VCPU_KICK_SIGNAL (once per process). */
int vcpu_kick_signal_setup(void);

/* One wrapper per ioctl; the ioctl's name is in the error text. */
int vcpu_get_regs(struct vcpu *v, struct kvm_regs *r, char *err, size_t errlen);
int vcpu_set_regs(struct vcpu *v, const struct kvm_regs *r, char *err, size_t errlen);
int vcpu_get_sregs(struct vcpu *v, struct kvm_sregs *s, char *err, size_t errlen);
int vcpu_set_sregs(struct vcpu *v, const struct kvm_sregs *s, char *err, size_t errlen);
int vcpu_set_mp_state(struct vcpu *v, __u32 mp_state, char *err, size_t errlen);

#endif /* KVMLU_VMM_VCPU_H */

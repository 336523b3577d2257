// SPDX-License-Identifier: GPL-2.0
/*
 * Building and tearing down a VM (see vm.h for the lifecycle). Order of
 * creation, and why:
 *   1. KVM_CREATE_VM, then the TSS and identity-map addresses and the
 *      vCPUs' TSC rate (vm_set_tsc_rate): all must be set before the
 *      first vCPU exists.
 *   2. KVM_CREATE_IRQCHIP then KVM_CREATE_PIT2: the PIT needs the irqchip,
 *      and vCPUs created afterwards get an in-kernel LAPIC.
 *   3. Guest RAM (libguestmem): guest_memfd is created from the VM fd.
 *   4. Devices on the bus (virtio devices need guest RAM for their
 *      rings, and the irqchip for their irqfds), then the vCPUs.
 * vm_destroy() undoes all of it and is also what a failed vm_create()
 * runs, so every step must tolerate the later ones not having happened.
 *
 * Pause and resume (the end of this file): the pausing thread sets
 * pause_req and vm->kick, then kicks every vCPU (immediate_exit + signal,
 * see vcpu.c); each vCPU thread sees kick at the top of its loop, parks
 * in vm_vcpu_park(), and the last one to park wakes the pauser. The
 * pauser waits with a deadline: a vCPU stuck in the kernel must give the
 * caller an error it can act on (the agent rolls back), not a hung
 * control socket. Unhappy paths: 1. timeout: the request is withdrawn
 * and the parked vCPUs are released, so the VM is running as before.
 * 2. a vCPU thread dies while pausing (VM stopping): the count of live
 * threads drops and the pause fails with -ESRCH.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "guestmem/guestmem_folio.h"
#include "kvmlu/kvm_uapi.h"
#include "vmm/kvm.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

static void vm_on_guest_reset(void *ctx, const char *why)
{
	vm_request_stop(ctx, VM_STOP_GUEST_RESET, "%s", why);
}

int vm_irq_line(void *ctx, unsigned int irq, int level)
{
	struct vm *vm = ctx;
	struct kvm_irq_level l = { .irq = irq, .level = (__u32)level };

	if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) < 0)
		return -errno;
	return 0;
}

/*
 * The TSC rate KVM gives each vCPU it creates, and must be able to run.
 * KVM's default is the host rate it measured when it started; on a host
 * without a constant TSC (the QEMU TCG hosts of the tests) that is the
 * early calibration, which the kernel's refined one may put beyond KVM's
 * 250 ppm tolerance from it (seen: 2092.743 MHz early, 2096.026 refined,
 * in about 3 boots of 10). Without TSC scaling KVM then cannot give a new
 * vCPU its default (below the host rate it refuses it, "user requested
 * TSC rate below hardware speed"; above it, it would catch up) and never
 * sets the vCPU's TSC multiplier, which stays 0: KVM's own reckoning of
 * the guest TSC (kvm_read_l1_tsc) stands still at the offset while the
 * real one runs at the host rate.
 * kvmclock's tsc_timestamp is then that constant, so the guest's clock is
 * off by the host TSC's count, and it jumps whenever KVM rewrites the
 * clock page from a new master clock: at every live upgrade or restore
 * (seen: a Linux guest's uptime +20 s to +64 s across a 50 ms blackout).
 * Without scaling a vCPU's TSC runs at the host rate whatever KVM is told,
 * so tell it that: KVM_SET_TSC_KHZ 0 on the VM is the host's tsc_khz, a
 * rate KVM always accepts. With scaling any default works; leave it.
 */
static int vm_set_tsc_rate(struct vm *vm, char *err, size_t errlen)
{
	/* KVM_CAP_TSC_CONTROL (and KVM_CAP_VM_TSC_CONTROL) say: TSC scaling. */
	if (ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_CONTROL) > 0)
		return 0;
	/*
	 * ENOTTY: a KVM older than 5.19 has no per-VM default to set; EINVAL:
	 * this KVM will not take one (e.g. a guest with a protected TSC).
	 * Either way its own default stays, as before.
	 */
	if (ioctl(vm->vm_fd, KVM_SET_TSC_KHZ, 0UL) < 0 && errno != ENOTTY && errno != EINVAL)
		return kvmlu_err(err, errlen, -errno, "KVM_SET_TSC_KHZ 0 (the host's rate) on the VM: %s",
			       strerror(errno));
	return 0;
}

static int vm_create_kvm_objects(struct vm *vm, char *err, size_t errlen)
{
	struct kvm_pit_config pit = { .flags = 0 };
	int rc;

	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0UL);
	if (vm->vm_fd < 0) {
		vm->vm_fd = -1;
		return kvmlu_err(err, errlen, -errno, "KVM_CREATE_VM: %s", strerror(errno));
	}
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, (unsigned long)VM_TSS_ADDR) < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_SET_TSS_ADDR %#llx: %s",
			       VM_TSS_ADDR, strerror(errno));
	{
		__u64 id_map = VM_IDENTITY_MAP_ADDR;

		if (ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &id_map) < 0)
			return kvmlu_err(err, errlen, -errno, "KVM_SET_IDENTITY_MAP_ADDR %#llx: %s",
				       VM_IDENTITY_MAP_ADDR, strerror(errno));
	}
	rc = vm_set_tsc_rate(vm, err, errlen);
	if (rc)
		return rc;
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_CREATE_IRQCHIP: %s", strerror(errno));
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_CREATE_PIT2: %s", strerror(errno));
	return 0;
}

static int vm_create_devices(struct vm *vm, char *err, size_t errlen)
{
	io_bus_init(&vm->bus);
	return vm_platform_ops.attach(vm->platform, &vm->bus, err, errlen);
}

static bool vm_vcpu_park(void *ctx, struct vcpu *v);

/* vcpu_host's stop: a guest-caused end or a failed KVM_RUN. */
static void vm_vcpu_stop(void *ctx, enum vm_stop_reason reason, const char *msg)
{
	vm_request_stop(ctx, reason, "%s", msg);
}

/* vcpu_host's exited: the vCPU thread is gone (a pause no longer waits for it). */
static void vm_vcpu_exited(void *ctx)
{
	struct vm *vm = ctx;

	pthread_mutex_lock(&vm->lock);
	vm->nr_threads--;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
}

static int vm_create_vcpus(struct vm *vm, char *err, size_t errlen)
{
	unsigned int i;
	int rc, khz;

	vm->vcpu_host = (struct vcpu_host){
		.kvm_fd = vm->kvm_fd,
		.vm_fd = vm->vm_fd,
		.run_size = vm->run_size,
		.bus = &vm->bus,
		.kick = &vm->kick,
		.park = vm_vcpu_park,
		.stop = vm_vcpu_stop,
		.exited = vm_vcpu_exited,
		.ctx = vm,
	};
	vm->vcpus = calloc(vm->nr_vcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return kvmlu_err(err, errlen, -ENOMEM, "allocate %u vCPUs", vm->nr_vcpus);
	for (i = 0; i < vm->nr_vcpus; i++)
		vm->vcpus[i].fd = -1;
	for (i = 0; i < vm->nr_vcpus; i++) {
		rc = vcpu_create(&vm->vcpu_host, &vm->vcpus[i], i, err, errlen);
		if (rc)
			return rc;
	}
	khz = ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ, 0);
	if (khz <= 0)
		return kvmlu_err(err, errlen, khz < 0 ? -errno : -EINVAL,
			       "vCPU 0: KVM_GET_TSC_KHZ returned %d", khz);
	vm->tsc_khz = (uint64_t)khz;
	return 0;
}

int vm_create(struct vm *vm, const struct vm_config *cfg, char *err, size_t errlen)
{
	struct vm_platform_args pa = {
		.serial_fd = cfg->serial_fd,
		.irq_line = vm_irq_line,
		.on_reset = vm_on_guest_reset,
		.ctx = vm,
	};
	pthread_condattr_t ca;
	int rc;

	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = vm->vm_fd = vm->stop_efd = -1;
	if (!cfg->name || !*cfg->name || strlen(cfg->name) > VM_NAME_MAX)
		return kvmlu_err(err, errlen, -EINVAL, "VM name must be 1..%d characters",
			       VM_NAME_MAX);
	if (cfg->nr_vcpus < 1 || cfg->nr_vcpus > VM_MAX_VCPUS)
		return kvmlu_err(err, errlen, -EINVAL, "%u vCPUs: must be 1..%d",
			       cfg->nr_vcpus, VM_MAX_VCPUS);
	snprintf(vm->name, sizeof(vm->name), "%s", cfg->name);
	vm->nr_vcpus = cfg->nr_vcpus;
	vm->ram_size = cfg->ram_size;
	vm->created_ns = kvmlu_mono_ns();

	pthread_mutex_init(&vm->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&vm->cond, &ca);
	pthread_condattr_destroy(&ca);
	vm->sync_made = true;
	rc = vm_platform_ops.create(&pa, &vm->platform, err, errlen);
	if (rc)
		goto err_destroy;

	vm->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->stop_efd < 0) {
		rc = kvmlu_err(err, errlen, -errno, "eventfd: %s", strerror(errno));
		goto err_destroy;
	}
	rc = kvm_open(NULL, err, errlen);
	if (rc < 0)
		goto err_destroy;
	vm->kvm_fd = rc;
	rc = kvm_check_caps(vm->kvm_fd, cfg->backend, err, errlen);
	if (rc)
		goto err_destroy;
	rc = kvm_vcpu_mmap_size(vm->kvm_fd, err, errlen);
	if (rc < 0)
		goto err_destroy;
	vm->run_size = rc;
	rc = vm_create_kvm_objects(vm, err, errlen);
	if (rc)
		goto err_destroy;
	rc = guestmem_layout(cfg->ram_size, &vm->mem);
	if (rc) {
		kvmlu_err(err, errlen, rc, "memory layout for %llu bytes: %s",
			(unsigned long long)cfg->ram_size, strerror(-rc));
		goto err_destroy;
	}
	if (cfg->adopt_fds) {
		vm->mem.backend = cfg->backend;
		rc = guestmem_adopt(&vm->mem, cfg->adopt_fds, err, errlen);
	} else {
		rc = guestmem_create(&vm->mem, cfg->backend, cfg->ram_size, vm->vm_fd,
				     vm->name, err, errlen);
	}
	if (rc)
		goto err_destroy;
	if (vm->mem.backend == GUESTMEM_MEMFD) {
		char folio[192];

		/* Said once per process: run, upgrade and restore all come here. */
		guestmem_folio_describe(&vm->mem, folio, sizeof(folio));
		fprintf(stderr, "kvmlu-vmm: %s: %s\n", vm->name, folio);
	}
	rc = guestmem_bind(&vm->mem, vm->vm_fd, err, errlen);
	if (rc)
		goto err_destroy;
	rc = vm_create_devices(vm, err, errlen);
	if (rc)
		goto err_destroy;
	rc = vm_virtio_create(&vm->virtio, cfg, vm->vm_fd, &vm->bus, &vm->mem, err, errlen);
	if (rc)
		goto err_destroy;
	rc = vm_create_vcpus(vm, err, errlen);
	if (rc)
		goto err_destroy;
	vm->state = VM_STATE_CREATED;
	return 0;
err_destroy:
	/* vm_destroy() undoes, in reverse, whatever of the above was done. */
	vm_destroy(vm);
	return rc;
}

int vm_start(struct vm *vm, char *err, size_t errlen)
{
	unsigned int i;
	int rc;

	/* Device threads first: a vCPU's first notify must find its thread. */
	rc = vm_virtio_start(&vm->virtio, err, errlen);
	if (rc) {
		vm_request_stop(vm, VM_STOP_VMM_ERROR, "%s", err ? err : "device start failed");
		return rc;
	}
	pthread_mutex_lock(&vm->lock);
	vm->state = VM_STATE_RUNNING;
	pthread_mutex_unlock(&vm->lock);
	for (i = 0; i < vm->nr_vcpus; i++) {
		pthread_mutex_lock(&vm->lock);
		vm->nr_threads++;
		pthread_mutex_unlock(&vm->lock);
		rc = vcpu_start(&vm->vcpus[i], err, errlen);
		if (rc) {
			pthread_mutex_lock(&vm->lock);
			vm->nr_threads--;
			pthread_mutex_unlock(&vm->lock);
			vm_request_stop(vm, VM_STOP_VMM_ERROR, "%s", err ? err : "vCPU start failed");
			return rc;
		}
	}
	return 0;
}

int vm_start_paused(struct vm *vm, char *err, size_t errlen)
{
	int rc;

	/* Set before any thread exists: each one parks before it enters KVM_RUN. */
	pthread_mutex_lock(&vm->lock);
	vm->pause_req = true;
	atomic_store(&vm->kick, 1);
	pthread_mutex_unlock(&vm->lock);
	rc = vm_start(vm, err, errlen);
	if (rc)
		return rc;
	/*
	 * No timeout that would release them (vm_pause() does on one): a
	 * thread that has not parked yet has not run the guest either.
	 */
	pthread_mutex_lock(&vm->lock);
	while (vm->nr_parked < vm->nr_threads && !vm->stop_req)
		pthread_cond_wait(&vm->cond, &vm->lock);
	if (vm->stop_req) {
		pthread_mutex_unlock(&vm->lock);
		return kvmlu_err(err, errlen, -ESRCH, "start: VM stopping (%s)",
				 vm_stop_reason_name(vm->stop_reason));
	}
	vm->state = VM_STATE_PAUSED;
	pthread_mutex_unlock(&vm->lock);
	/* As after every pause: vm_resume() undoes it. */
	vm_virtio_quiesce(&vm->virtio);
	return 0;
}

void vm_kick_vcpus(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->nr_vcpus; i++)
		vcpu_kick(&vm->vcpus[i]);
}

void vm_request_stop(struct vm *vm, enum vm_stop_reason reason, const char *fmt, ...)
{
	uint64_t one = 1;
	va_list ap;
	bool first;

	pthread_mutex_lock(&vm->lock);
	first = vm->stop_reason == VM_STOP_NONE;
	if (first) {
		vm->stop_reason = reason;
		va_start(ap, fmt);
		vsnprintf(vm->stop_msg, sizeof(vm->stop_msg), fmt, ap);
		va_end(ap);
	}
	vm->stop_req = true;
	if (vm->state != VM_STATE_STOPPED)
		vm->state = VM_STATE_STOPPING;
	atomic_store(&vm->kick, 1);
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	if (!first)
		return;
	vm_kick_vcpus(vm);
	if (vm->platform)
		vm_platform_ops.stop(vm->platform);
	if (vm->stop_efd >= 0 && write(vm->stop_efd, &one, sizeof(one)) < 0) {
		/* Nonblocking eventfd: only fails if the counter is full, i.e. already signalled. */
	}
}

void vm_join(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		if (!vm->vcpus[i].thread_started)
			continue;
		pthread_join(vm->vcpus[i].thread, NULL);
		vm->vcpus[i].thread_started = false;
	}
	pthread_mutex_lock(&vm->lock);
	vm->state = VM_STATE_STOPPED;
	pthread_mutex_unlock(&vm->lock);
}

void vm_destroy(struct vm *vm)
{
	unsigned int i;

	if (vm->vcpus) {
		vm_join(vm);
		for (i = 0; i < vm->nr_vcpus; i++)
			vcpu_destroy(&vm->vcpus[i]);
		free(vm->vcpus);
		vm->vcpus = NULL;
	}
	/* Before RAM goes: the I/O threads write into it. */
	vm_virtio_destroy(&vm->virtio);
	guestmem_destroy(&vm->mem);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->stop_efd >= 0)
		close(vm->stop_efd);
	vm->vm_fd = vm->kvm_fd = vm->stop_efd = -1;
	vm_platform_ops.destroy(vm->platform);
	vm->platform = NULL;
	if (vm->sync_made) {
		pthread_cond_destroy(&vm->cond);
		pthread_mutex_destroy(&vm->lock);
		vm->sync_made = false;
	}
}

enum vm_state vm_get_state(struct vm *vm)
{
	enum vm_state s;

	pthread_mutex_lock(&vm->lock);
	s = vm->state;
	pthread_mutex_unlock(&vm->lock);
	return s;
}

const char *vm_state_name(enum vm_state s)
{
	switch (s) {
	case VM_STATE_CREATED: return "created";
	case VM_STATE_RUNNING: return "running";
	case VM_STATE_PAUSED: return "paused";
	case VM_STATE_STOPPING: return "stopping";
	case VM_STATE_STOPPED: return "stopped";
	}
	return "unknown";
}

const char *vm_stop_reason_name(enum vm_stop_reason r)
{
	switch (r) {
	case VM_STOP_NONE: return "none";
	case VM_STOP_REQUESTED: return "shutdown-command";
	case VM_STOP_SIGNAL: return "signal";
	case VM_STOP_GUEST_TRIPLE_FAULT: return "guest-triple-fault";
	case VM_STOP_GUEST_RESET: return "guest-reset";
	case VM_STOP_GUEST_POWEROFF: return "guest-poweroff";
	case VM_STOP_GUEST_CRASH: return "guest-crash";
	case VM_STOP_INTERNAL_ERROR: return "kvm-internal-error";
	case VM_STOP_FAIL_ENTRY: return "kvm-fail-entry";
	case VM_STOP_VMM_ERROR: return "vmm-error";
	}
	return "unknown";
}

uint64_t vm_uptime_ns(const struct vm *vm)
{
	return kvmlu_mono_ns() - vm->created_ns;
}

/* Pause and resume: see the top of this file. */

int vm_pause(struct vm *vm, unsigned int timeout_ms, uint64_t *ns,
	     char *err, size_t errlen)
{
	struct timespec dl;
	uint64_t t0 = kvmlu_mono_ns();
	unsigned int i;
	int rc = 0;

	*ns = 0;
	pthread_mutex_lock(&vm->lock);
	if (vm->state == VM_STATE_PAUSED) {
		pthread_mutex_unlock(&vm->lock);
		return 0;
	}
	if (vm->state != VM_STATE_RUNNING || vm->stop_req) {
		rc = kvmlu_err(err, errlen, -ESRCH, "pause: VM is %s, not running",
			     vm_state_name(vm->state));
		pthread_mutex_unlock(&vm->lock);
		return rc;
	}
	vm->pause_req = true;
	atomic_store(&vm->kick, 1);
	pthread_mutex_unlock(&vm->lock);

	vm_kick_vcpus(vm);

	kvmlu_deadline_ms(&dl, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&vm->lock);
	while (vm->nr_parked < vm->nr_threads && !vm->stop_req && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&vm->cond, &vm->lock, &dl);
	if (!vm->stop_req && vm->nr_parked == vm->nr_threads) {
		vm->state = VM_STATE_PAUSED;
		pthread_mutex_unlock(&vm->lock);
		/* No vCPU can add a request now: finish the ones it made. */
		vm_virtio_quiesce(&vm->virtio);
		*ns = kvmlu_mono_ns() - t0;
		return 0;
	}
	if (vm->stop_req) {
		rc = kvmlu_err(err, errlen, -ESRCH, "pause: VM stopping (%s)",
			     vm_stop_reason_name(vm->stop_reason));
	} else {
		for (i = 0; i < vm->nr_vcpus && vm->vcpus[i].parked; i++)
			;
		rc = kvmlu_err(err, errlen, -ETIMEDOUT,
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
	uint64_t t0 = kvmlu_mono_ns();
	int rc;

	*ns = 0;
	pthread_mutex_lock(&vm->lock);
	if (vm->state == VM_STATE_RUNNING && !vm->stop_req) {
		pthread_mutex_unlock(&vm->lock);
		return 0;
	}
	if (vm->state != VM_STATE_PAUSED || vm->stop_req) {
		rc = kvmlu_err(err, errlen, -ESRCH, "resume: VM is %s",
			     vm_state_name(vm->state));
		pthread_mutex_unlock(&vm->lock);
		return rc;
	}
	vm->pause_req = false;
	atomic_store(&vm->kick, 0);
	vm->state = VM_STATE_RUNNING;
	/* NICs held their frames since the quiesce; they move again (only eventfd writes). */
	vm_virtio_resume(&vm->virtio);
	pthread_cond_broadcast(&vm->cond);
	/* Resumed means every vCPU is on its way back into KVM_RUN. */
	while (vm->nr_parked > 0 && !vm->stop_req)
		pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
	*ns = kvmlu_mono_ns() - t0;
	return 0;
}

/* vcpu_host's park: on the vCPU thread, when vm->kick is set. */
static bool vm_vcpu_park(void *ctx, struct vcpu *v)
{
	struct vm *vm = ctx;
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

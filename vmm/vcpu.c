// SPDX-License-Identifier: GPL-2.0
/*
 * vCPU threads and the KVM_RUN loop (see vcpu.h).
 *
 * Every exit costs ~110 us on the hosts here, so the loop does the least
 * it can: one atomic load of the VM's kick flag (vcpu_host), KVM_RUN, a
 * switch on the exit reason. Pause and stop go through that flag plus a
 * kick: the kicker sets kvm_run.immediate_exit and sends
 * VCPU_KICK_SIGNAL. The signal gets a
 * thread out of a KVM_RUN already in progress; immediate_exit covers the
 * window where the thread has read kick but not yet entered KVM_RUN.
 *
 * Guest-caused ends (triple fault, reset, KVM internal error, entry
 * failure) stop the whole VM with a message naming the exit; they never
 * take the process down.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/cpuid.h"
#include "vmm/io_bus.h"
#include "vmm/vcpu.h"

/* Stop the VM with a message, as vm_request_stop() would be asked to. */
static void vcpu_stop(struct vcpu *v, enum vm_stop_reason reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void vcpu_stop(struct vcpu *v, enum vm_stop_reason reason, const char *fmt, ...)
{
	char msg[VM_STOP_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	v->host->stop(v->host->ctx, reason, msg);
}

static void vcpu_kick_handler(int sig)
{
	(void)sig;	/* its only job is to interrupt KVM_RUN */
}

int vcpu_kick_signal_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vcpu_kick_handler;
	sigemptyset(&sa.sa_mask);
	/* SA_RESTART: a kick landing in the UART's write() must not lose a byte. */
	sa.sa_flags = SA_RESTART;
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL) < 0)
		return -errno;
	return 0;
}

int vcpu_create(const struct vcpu_host *host, struct vcpu *v, unsigned int index,
		char *err, size_t errlen)
{
	int rc;

	memset(v, 0, sizeof(*v));
	v->host = host;
	v->index = index;
	v->fd = ioctl(host->vm_fd, KVM_CREATE_VCPU, (unsigned long)index);
	if (v->fd < 0) {
		rc = -errno;
		v->fd = -1;
		return kvmlu_err(err, errlen, rc, "KVM_CREATE_VCPU %u: %s", index, strerror(-rc));
	}
	v->run = mmap(NULL, (size_t)host->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		rc = kvmlu_err(err, errlen, -errno, "vCPU %u: mmap kvm_run (%d bytes): %s",
			     index, host->run_size, strerror(errno));
		v->run = NULL;
		goto err_close;
	}
	rc = cpuid_setup(host->kvm_fd, v->fd, index, err, errlen);
	if (rc)
		goto err_unmap;
	return 0;
err_unmap:
	munmap(v->run, (size_t)host->run_size);
	v->run = NULL;
err_close:
	close(v->fd);
	v->fd = -1;
	return rc;
}

static int vcpu_handle_pio(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint64_t bytes = (uint64_t)run->io.size * run->io.count;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;
	uint8_t *data;
	uint32_t i;

	/* The kernel fills these, but a bad offset would be a wild write. */
	if (run->io.size == 0 || run->io.size > 4 ||
	    run->io.data_offset > (uint64_t)v->host->run_size ||
	    bytes > (uint64_t)v->host->run_size - run->io.data_offset) {
		vcpu_stop(v, VM_STOP_VMM_ERROR,
				"vCPU %u: KVM_EXIT_IO port %#x size %u count %u data_offset %llu outside kvm_run (%d bytes)",
				v->index, run->io.port, run->io.size, run->io.count,
				(unsigned long long)run->io.data_offset, v->host->run_size);
		return -EINVAL;
	}
	data = (uint8_t *)run + run->io.data_offset;
	for (i = 0; i < run->io.count; i++)
		io_bus_access(v->host->bus, IO_SPACE_PIO, run->io.port,
			      data + (size_t)i * run->io.size, run->io.size, is_write);
	return 0;
}

/*
 * A triple fault leaves nothing in the guest to look at: say where the
 * vCPU was (stderr, the VMM log), so a rare one can be understood later.
 * On AMD (SVM) KVM resets the vCPU before it returns KVM_EXIT_SHUTDOWN, so
 * there the state is always the reset state and says so rather than
 * pretending the guest was executing at the reset vector.
 */
/* The vCPU state a triple fault or an internal error left, for the log. */
static void vcpu_report_stopped(struct vcpu *v)
{
	struct kvm_regs r;
	struct kvm_sregs sr;
	struct kvm_vcpu_events ev;

	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0 || ioctl(v->fd, KVM_GET_SREGS, &sr) < 0)
		return;
	fprintf(stderr, "kvmlu-vmm: vCPU %u stopped at: rip %#llx rsp %#llx rflags %#llx "
		"cs %#x/dpl %u ss %#x cr0 %#llx cr2 %#llx cr3 %#llx cr4 %#llx efer %#llx "
		"idt %#llx/%#x gdt %#llx/%#x tr %#x base %#llx\n",
		v->index, (unsigned long long)r.rip, (unsigned long long)r.rsp,
		(unsigned long long)r.rflags, sr.cs.selector, sr.cs.dpl, sr.ss.selector,
		(unsigned long long)sr.cr0, (unsigned long long)sr.cr2,
		(unsigned long long)sr.cr3, (unsigned long long)sr.cr4,
		(unsigned long long)sr.efer, (unsigned long long)sr.idt.base, sr.idt.limit,
		(unsigned long long)sr.gdt.base, sr.gdt.limit, sr.tr.selector,
		(unsigned long long)sr.tr.base);
	if (r.rip == 0xfff0 && sr.cs.selector == 0xf000)
		fprintf(stderr, "kvmlu-vmm: vCPU %u: that is the reset state: the host's KVM "
			"(AMD SVM) reset the vCPU at the shutdown, the faulting state is lost\n",
			v->index);
	if (ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev) == 0)
		fprintf(stderr, "kvmlu-vmm: vCPU %u events: exception %u nr %u error %#x "
			"(has %u) nmi %u/%u\n", v->index, ev.exception.injected,
			ev.exception.nr, ev.exception.error_code, ev.exception.has_error_code,
			ev.nmi.injected, ev.nmi.pending);
}

static int vcpu_handle_system_event(struct vcpu *v)
{
	switch (v->run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vcpu_stop(v, VM_STOP_GUEST_POWEROFF,
				"vCPU %u: guest powered off (KVM_SYSTEM_EVENT_SHUTDOWN)", v->index);
		break;
	case KVM_SYSTEM_EVENT_RESET:
		vcpu_stop(v, VM_STOP_GUEST_RESET,
				"vCPU %u: guest reset (KVM_SYSTEM_EVENT_RESET)", v->index);
		break;
	case KVM_SYSTEM_EVENT_CRASH:
		vcpu_stop(v, VM_STOP_GUEST_CRASH,
				"vCPU %u: guest crashed (KVM_SYSTEM_EVENT_CRASH)", v->index);
		break;
	default:
		vcpu_stop(v, VM_STOP_VMM_ERROR,
				"vCPU %u: unknown KVM_EXIT_SYSTEM_EVENT type %u", v->index,
				v->run->system_event.type);
		break;
	}
	return -ECANCELED;
}

/* 0: go on running; else the VM is stopping. */
static int vcpu_handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		return vcpu_handle_pio(v);
	case KVM_EXIT_MMIO:
		io_bus_access(v->host->bus, IO_SPACE_MMIO, run->mmio.phys_addr,
			      run->mmio.data, run->mmio.len, run->mmio.is_write);
		return 0;
	case KVM_EXIT_INTR:
	case KVM_EXIT_HLT:	/* only without an in-kernel LAPIC; just run again */
		return 0;
	case KVM_EXIT_SHUTDOWN:
		vcpu_report_stopped(v);
		vcpu_stop(v, VM_STOP_GUEST_TRIPLE_FAULT,
				"vCPU %u: guest shutdown (triple fault, KVM_EXIT_SHUTDOWN)", v->index);
		return -ECANCELED;
	case KVM_EXIT_SYSTEM_EVENT:
		return vcpu_handle_system_event(v);
	case KVM_EXIT_INTERNAL_ERROR: {
		/* suberror 3 (event delivery): info2, exit reason, info1, gpa, cpu */
		char data[160] = "";
		size_t len = 0;

		for (uint32_t i = 0; i < run->internal.ndata && i < 6 && len < sizeof(data); i++)
			len += (size_t)snprintf(data + len, sizeof(data) - len, "%s%#llx", i ? " " : "",
						(unsigned long long)run->internal.data[i]);
		vcpu_report_stopped(v);
		vcpu_stop(v, VM_STOP_INTERNAL_ERROR,
				"vCPU %u: KVM_EXIT_INTERNAL_ERROR suberror %u (data: %s)",
				v->index, run->internal.suberror, data[0] ? data : "none");
		return -ECANCELED;
	}
	case KVM_EXIT_FAIL_ENTRY:
		vcpu_stop(v, VM_STOP_FAIL_ENTRY,
				"vCPU %u: KVM_EXIT_FAIL_ENTRY hardware_entry_failure_reason %#llx on cpu %u",
				v->index,
				(unsigned long long)run->fail_entry.hardware_entry_failure_reason,
				run->fail_entry.cpu);
		return -ECANCELED;
	default:
		vcpu_stop(v, VM_STOP_VMM_ERROR,
				"vCPU %u: unexpected KVM exit reason %u", v->index, run->exit_reason);
		return -ECANCELED;
	}
}

/*
 * An IN or MMIO read is only complete once KVM_RUN is entered again (the
 * kernel copies the data into the guest's registers then). Before parking,
 * enter once with immediate_exit set: the pending operation completes and
 * the guest does not run, so paused state is consistent.
 */
static void vcpu_complete_pending_io(struct vcpu *v)
{
	v->run->immediate_exit = 1;
	(void)ioctl(v->fd, KVM_RUN, 0);
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	const struct vcpu_host *h = v->host;
	char tname[16];
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	snprintf(tname, sizeof(tname), "vcpu%u", v->index);
	pthread_setname_np(pthread_self(), tname);

	for (;;) {
		if (atomic_load_explicit(h->kick, memory_order_acquire)) {
			vcpu_complete_pending_io(v);
			v->run->immediate_exit = 0;
			atomic_thread_fence(memory_order_seq_cst);
			if (h->park(h->ctx, v))
				break;
			continue;
		}
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				/*
				 * Clear before rereading kick: a kicker sets kick
				 * first, so either we see it or its immediate_exit
				 * lands after our clear.
				 */
				v->run->immediate_exit = 0;
				atomic_thread_fence(memory_order_seq_cst);
				continue;
			}
			vcpu_stop(v, VM_STOP_VMM_ERROR, "vCPU %u: KVM_RUN: %s",
					v->index, strerror(errno));
			break;
		}
		v->exits++;
		if (vcpu_handle_exit(v))
			break;
	}

	h->exited(h->ctx);
	return NULL;
}

int vcpu_start(struct vcpu *v, char *err, size_t errlen)
{
	int rc = pthread_create(&v->thread, NULL, vcpu_thread, v);

	if (rc)
		return kvmlu_err(err, errlen, -rc, "vCPU %u: pthread_create: %s",
			       v->index, strerror(rc));
	v->thread_started = true;
	return 0;
}

void vcpu_kick(struct vcpu *v)
{
	if (!v->thread_started)
		return;
	v->run->immediate_exit = 1;
	atomic_thread_fence(memory_order_seq_cst);
	pthread_kill(v->thread, VCPU_KICK_SIGNAL);
}

void vcpu_destroy(struct vcpu *v)
{
	if (v->run)
		munmap(v->run, (size_t)v->host->run_size);
	v->run = NULL;
	if (v->fd >= 0)
		close(v->fd);
	v->fd = -1;
}

int vcpu_get_regs(struct vcpu *v, struct kvm_regs *r, char *err, size_t errlen)
{
	if (ioctl(v->fd, KVM_GET_REGS, r) < 0)
		return kvmlu_err(err, errlen, -errno, "vCPU %u: KVM_GET_REGS: %s",
			       v->index, strerror(errno));
	return 0;
}

int vcpu_set_regs(struct vcpu *v, const struct kvm_regs *r, char *err, size_t errlen)
{
	if (ioctl(v->fd, KVM_SET_REGS, r) < 0)
		return kvmlu_err(err, errlen, -errno, "vCPU %u: KVM_SET_REGS: %s",
			       v->index, strerror(errno));
	return 0;
}

int vcpu_get_sregs(struct vcpu *v, struct kvm_sregs *s, char *err, size_t errlen)
{
	if (ioctl(v->fd, KVM_GET_SREGS, s) < 0)
		return kvmlu_err(err, errlen, -errno, "vCPU %u: KVM_GET_SREGS: %s",
			       v->index, strerror(errno));
	return 0;
}

int vcpu_set_sregs(struct vcpu *v, const struct kvm_sregs *s, char *err, size_t errlen)
{
	if (ioctl(v->fd, KVM_SET_SREGS, s) < 0)
		return kvmlu_err(err, errlen, -errno, "vCPU %u: KVM_SET_SREGS: %s",
			       v->index, strerror(errno));
	return 0;
}

int vcpu_set_mp_state(struct vcpu *v, __u32 mp_state, char *err, size_t errlen)
{
	struct kvm_mp_state mp = { .mp_state = mp_state };

	if (ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0)
		return kvmlu_err(err, errlen, -errno, "vCPU %u: KVM_SET_MP_STATE %u: %s",
			       v->index, mp_state, strerror(errno));
	return 0;
}

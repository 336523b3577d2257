// SPDX-License-Identifier: GPL-2.0
/*
 * See vmm_process.h. Termination signals are taken through a signalfd in
 * the main thread rather than a handler, so stopping a VM runs in normal
 * code (locks, the control socket) and never inside a signal handler;
 * the kick signal stays deliverable to vCPU threads only (vcpu.c).
 *
 * SIGHUP is blocked too and taken by a thread of its own that logs it
 * and does nothing more: a VMM started from a shell that exits (the
 * terminal hangs up) keeps its VM. Blocked everywhere, it never
 * interrupts a vCPU or the control thread.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "vmm/vcpu.h"
#include "vmm/control/vmm_process.h"

static void *vmm_sighup_thread(void *arg)
{
	static const char msg[] =
		"kvmlu-vmm: SIGHUP ignored: the VM keeps running (stop it with SIGTERM or shutdown)\n";
	sigset_t set;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	for (;;) {
		if (sigwaitinfo(&set, NULL) != SIGHUP)
			continue;
		/* stderr may be the terminal that hung up: then nobody reads this anyway. */
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* nothing more to do */
		}
	}
	return NULL;
}

int vmm_signals_setup(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t set;
	int rc;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) || vcpu_kick_signal_setup())
		return -1;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, vmm_sighup_thread, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		errno = rc;
		return -1;
	}
	pthread_setname_np(t, "sighup");
	sigdelset(&set, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	sigdelset(&set, VCPU_KICK_SIGNAL);
	return signalfd(-1, &set, SFD_CLOEXEC);
}

int vmm_wait_for_stop(struct vm *vm, int sig_fd)
{
	struct signalfd_siginfo si;
	struct pollfd pfd[2] = {
		{ .fd = vm->stop_efd, .events = POLLIN },
		{ .fd = sig_fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents)
			return 0;
		if (pfd[1].revents && read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
			vm_request_stop(vm, VM_STOP_SIGNAL, "stopped by %s",
					strsignal((int)si.ssi_signo));
			return 0;
		}
	}
}

int vmm_exit_status(enum vm_stop_reason r)
{
	switch (r) {
	case VM_STOP_NONE:
	case VM_STOP_REQUESTED:
	case VM_STOP_SIGNAL:
	case VM_STOP_GUEST_POWEROFF:
		return 0;
	case VM_STOP_GUEST_TRIPLE_FAULT:
		return 10;
	case VM_STOP_GUEST_RESET:
		return 11;
	case VM_STOP_GUEST_CRASH:
		return 12;
	case VM_STOP_INTERNAL_ERROR:
		return 13;
	case VM_STOP_FAIL_ENTRY:
		return 14;
	case VM_STOP_VMM_ERROR:
		break;
	}
	return 1;
}

int vmm_serve(struct vm *vm, int sig_fd, struct control_server *server)
{
	int rc = vmm_wait_for_stop(vm, sig_fd);

	if (rc)
		vm_request_stop(vm, VM_STOP_VMM_ERROR, "VMM main loop failed: %s", strerror(-rc));
	vm_join(vm);
	if (server)
		control_server_stop(server);
	fprintf(stderr, "kvmlu-vmm: %s: stopped (%s): %s\n", vm->name,
		vm_stop_reason_name(vm->stop_reason), vm->stop_msg);
	return vmm_exit_status(vm->stop_reason);
}

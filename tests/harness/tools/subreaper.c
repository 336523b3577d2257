// SPDX-License-Identifier: GPL-2.0
/*
 * subreaper: test-only tool of the harness cases that run libvirtd
 * (agent_libvirt_ram_in_place, libvirt_in_qemu_host).
 *
 *   subreaper COMMAND [ARGS...]
 *
 * Marks itself a child subreaper (PR_SET_CHILD_SUBREAPER), runs COMMAND as
 * its child and reaps every process that ends below it, COMMAND's orphans
 * included, as soon as it ends; forwards SIGTERM, SIGINT, SIGHUP and
 * SIGQUIT to COMMAND; exits when COMMAND does, with its status (128 + N
 * for signal N).
 *
 * Why: libvirtd double-forks QEMU, so QEMU's parent is whoever reaps
 * orphans. On a host that is systemd, which reaps at once. In the QEMU
 * host it is PID 1, the case's busybox shell, which reaps only when it
 * waits for a job of its own: an ended QEMU stays a zombie, and libvirt,
 * which counts a process as gone only when kill() says ESRCH, waits out
 * its whole kill timeout (40 s in every managed save). Under this tool
 * the zombie is gone at once, as on a host.
 *
 * Exit 2 on bad usage or a failed start, with a message.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t main_pid;

static void forward(int sig)
{
	if (main_pid > 0)
		kill((pid_t)main_pid, sig);
}

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t all, old;
	size_t i;
	pid_t pid;
	int status;

	if (argc < 2) {
		fprintf(stderr, "usage: subreaper COMMAND [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "subreaper: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
		return 2;
	}
	/* The handlers go in before the fork with the signals blocked, so
	 * that none arrives while main_pid is not yet set. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);

	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "subreaper: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		sa.sa_handler = SIG_DFL;
		for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
			sigaction(forwarded[i], &sa, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(argv[1], argv + 1);
		fprintf(stderr, "subreaper: exec %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	main_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);

	for (;;) {
		pid_t done = waitpid(-1, &status, 0);

		if (done < 0) {
			if (errno == EINTR)
				continue;
			/* ECHILD: COMMAND is gone without our seeing it; cannot be. */
			fprintf(stderr, "subreaper: waitpid: %s\n", strerror(errno));
			return 2;
		}
		if (done != pid)
			continue;	/* an orphan, reaped: what we are for */
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		return 128 + WTERMSIG(status);
	}
}

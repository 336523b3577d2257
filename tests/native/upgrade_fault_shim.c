// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only LD_PRELOAD shim: faults at the messages of a live upgrade
 * (vmm/upgrade/upgrade_wire.h), in whichever kvmlu-vmm sends or receives
 * them. Built into build/san/test/ only; nothing kvmlu ships loads it
 * or reads its variable.
 *
 * KVMLU_UPGRADE_FAULT_FILE names a file read at every upgrade message
 * (so a test can change the fault between upgrades of one VM); absent or
 * empty: no fault. Its one line:
 *
 *   send:<msg>:<action>   before the process sends message <msg>
 *   recv:<msg>:<action>   once it has received <msg>, before acting on it
 *
 * The message name says the side: send:prepare, recv:ready, send:state,
 * recv:restored, send:commit, recv:resumed are the old process;
 * recv:prepare, send:ready, recv:state, send:restored, recv:commit,
 * send:resumed the new one. Actions:
 *
 *   kill          SIGKILL itself
 *   stop          SIGSTOP itself (the test sends SIGCONT or SIGKILL)
 *   delay:<ms>    sleep that long, then go on
 *   replace:<path>  send:state only: send the file at <path> as the
 *                 state instead of the captured one (a hostile state)
 *
 * Each fault writes one line to stderr first, so a test finds the pid:
 *   kvmlu-upgrade-fault: pid 1234 send:restored:stop
 * Messages are told from other sendmsg/recvmsg traffic by their text,
 * which starts {"msg":" (json_line_format() keeps the key first).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG_PREFIX "{\"msg\":\""

typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);

/*
 * The message's name into name; false if not a wire message. Its text is
 * in one iovec of its own (after common/fd_pass.c's header), len bytes
 * in all were sent or received.
 */
static bool msg_name(const struct msghdr *m, size_t len, char *name, size_t namelen)
{
	size_t k = strlen(MSG_PREFIX), off = 0;

	for (size_t i = 0; i < m->msg_iovlen && off < len; i++) {
		const char *p = m->msg_iov[i].iov_base;
		size_t n = m->msg_iov[i].iov_len, j;

		if (n > len - off)
			n = len - off;
		off += m->msg_iov[i].iov_len;
		if (!p || n <= k || strncmp(p, MSG_PREFIX, k))
			continue;
		for (j = k; j < n && p[j] != '"'; j++)
			;
		if (j == n || j - k >= namelen)
			return false;
		memcpy(name, p + k, j - k);
		name[j - k] = '\0';
		return true;
	}
	return false;
}

/* The fault for "<dir>:<name>:" into action (the rest of the line); false if none. */
static bool fault_for(const char *dir, const char *name, char *action, size_t actlen)
{
	const char *path = getenv("KVMLU_UPGRADE_FAULT_FILE");
	char line[512], want[64];
	size_t n;
	int fd;
	ssize_t r;

	if (!path)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	r = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (r <= 0)
		return false;
	line[r] = '\0';
	line[strcspn(line, "\n")] = '\0';
	snprintf(want, sizeof(want), "%s:%s:", dir, name);
	n = strlen(want);
	if (strncmp(line, want, n))
		return false;
	snprintf(action, actlen, "%s", line + n);
	return true;
}

static void say(const char *dir, const char *name, const char *action)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "kvmlu-upgrade-fault: pid %d %s:%s:%s\n",
			 (int)getpid(), dir, name, action);

	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nothing more to say */
	}
}

/* kill, stop, delay: act; replace is handled by the caller. */
static void act(const char *action)
{
	if (!strcmp(action, "kill")) {
		raise(SIGKILL);
	} else if (!strcmp(action, "stop")) {
		raise(SIGSTOP);
	} else if (!strncmp(action, "delay:", 6)) {
		long ms = strtol(action + 6, NULL, 10);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

/* A sealed memfd with the file's bytes, like vmm/state/state_memfd.c makes; -1 on failure. */
static int state_from_file(const char *path)
{
	char buf[65536];
	int in = open(path, O_RDONLY | O_CLOEXEC), mfd;
	ssize_t n;

	if (in < 0)
		return -1;
	mfd = memfd_create("kvmlu-state-replaced", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	while (mfd >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, (size_t)n) != n) {
			close(mfd);
			mfd = -1;
		}
	close(in);
	if (mfd >= 0 && fcntl(mfd, F_ADD_SEALS,
			      F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0) {
		close(mfd);
		mfd = -1;
	}
	return mfd;
}

ssize_t sendmsg(int sock, const struct msghdr *m, int flags)
{
	static sendmsg_fn real;
	char name[32], action[400];
	struct cmsghdr *c;
	struct msghdr copy;
	char cbuf[CMSG_SPACE(sizeof(int))];
	ssize_t ret;
	int mfd;

	if (!real)
		real = (sendmsg_fn)dlsym(RTLD_NEXT, "sendmsg");
	if (!msg_name(m, (size_t)-1, name, sizeof(name)) ||
	    !fault_for("send", name, action, sizeof(action)))
		return real(sock, m, flags);
	say("send", name, action);
	if (strncmp(action, "replace:", 8)) {
		act(action);
		return real(sock, m, flags);
	}
	/* The state message carries exactly one fd: swap it for the file's. */
	mfd = state_from_file(action + 8);
	if (mfd < 0)
		return real(sock, m, flags);
	copy = *m;
	memset(cbuf, 0, sizeof(cbuf));
	copy.msg_control = cbuf;
	copy.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&copy);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &mfd, sizeof(int));
	ret = real(sock, &copy, flags);
	close(mfd);
	return ret;
}

ssize_t recvmsg(int sock, struct msghdr *m, int flags)
{
	static recvmsg_fn real;
	char name[32], action[400];
	ssize_t ret;

	if (!real)
		real = (recvmsg_fn)dlsym(RTLD_NEXT, "recvmsg");
	ret = real(sock, m, flags);
	if (ret > 0 && msg_name(m, (size_t)ret, name, sizeof(name)) &&
	    fault_for("recv", name, action, sizeof(action))) {
		say("recv", name, action);
		act(action);
	}
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * LUO sessions over /dev/liveupdate: create, preserve, retrieve, finish.
 *
 * Happy path: prepare-update creates "kvmlu/vm/<name>", preserves the
 * state memfd and the RAM files under the fixed tokens of luo_session.h
 * and keeps the session fd open through the kexec. The new kernel hands
 * the session back once by name; the restoring VMM retrieves each token,
 * restores the VM and finishes the session.
 *
 * Unhappy paths:
 *  1. /dev/liveupdate held by another process: wait up to
 *     LUO_SESSION_BUSY_WAIT_MS (everyone holds it for one ioctl only),
 *     then say who to look for.
 *  2. A file the kernel has no LUO handler for (hugetlb memfd,
 *     guest_memfd on a kernel without its preservation): PRESERVE_FD fails
 *     with ENOENT (no handler) or EOPNOTSUPP (handler refused); the caller
 *     closes the session, which unpreserves whatever was already in it.
 *  3. Closing an outgoing session before the kexec (abort, or the VMM
 *     dies): the kernel unpreserves everything; that VM is then not kept.
 *  4. No session of that name after the kexec (its VMM was gone at the
 *     kexec): RETRIEVE_SESSION says ENOENT; a second retrieve says EINVAL.
 *  5. Closing a retrieved session finishes it: keep it open to keep the
 *     files (checksum mismatch).
 */
#include "common/luo_session.h"
#include "common/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static const char *luo_device = LUO_SESSION_DEVICE;

void luo_session_set_device(const char *path)
{
	luo_device = path ? path : LUO_SESSION_DEVICE;
}

static const char *luo_errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "unknown errno";
}

void luo_session_init(struct luo_session *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

static bool luo_name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* The VM part alone: what `kvmlu-vmm run --name` may be to get a session. */
static int luo_vm_name_check(const char *vm, char *err, size_t errlen)
{
	size_t max = LUO_SESSION_NAME_SIZE - 1 - strlen(LUO_SESSION_VM_PREFIX);
	size_t len = strnlen(vm, max + 1);

	if (len == 0) {
		kvmlu_err(err, errlen, 0, "VM name is empty");
		return -EINVAL;
	}
	if (len > max) {
		kvmlu_err(err, errlen, 0, "VM name '%.*s...' is longer than %zu characters "
			"(the LUO session name is limited to %d bytes)",
			(int)max, vm, max, LUO_SESSION_NAME_SIZE - 1);
		return -EINVAL;
	}
	/* Same rule as `kvmlu-vmm run --name`: a letter or digit first. */
	if (!luo_name_char_ok(vm[0]) || vm[0] == '.' || vm[0] == '-' || vm[0] == '_') {
		kvmlu_err(err, errlen, 0, "VM name '%s' does not start with a letter or digit",
			      vm);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (!luo_name_char_ok(vm[i])) {
			kvmlu_err(err, errlen, 0, "VM name '%s' has character 0x%02x at %zu "
				"(allowed: letters, digits, '_', '.', '-')",
				vm, (unsigned char)vm[i], i);
			return -EINVAL;
		}
	}
	return 0;
}

int luo_session_name_check(const char *name, char *err, size_t errlen)
{
	size_t plen = strlen(LUO_SESSION_VM_PREFIX);

	if (!name) {
		kvmlu_err(err, errlen, 0, "no session name");
		return -EINVAL;
	}
	if (strncmp(name, LUO_SESSION_VM_PREFIX, plen) != 0) {
		kvmlu_err(err, errlen, 0, "session name '%.*s' does not start with '%s'",
			LUO_SESSION_NAME_SIZE, name, LUO_SESSION_VM_PREFIX);
		return -EINVAL;
	}
	return luo_vm_name_check(name + plen, err, errlen);
}

int luo_session_name_for_vm(const char *vm, char *out, char *err, size_t errlen)
{
	int ret;

	if (!vm) {
		kvmlu_err(err, errlen, 0, "no VM name");
		return -EINVAL;
	}
	ret = luo_vm_name_check(vm, err, errlen);
	if (ret)
		return ret;
	snprintf(out, LUO_SESSION_NAME_SIZE, "%s%s", LUO_SESSION_VM_PREFIX, vm);
	return 0;
}

static bool lv_uuid_ok(const char *u)
{
	if (strnlen(u, 37) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? u[i] != '-' : !((u[i] >= '0' && u[i] <= '9') || (u[i] >= 'a' && u[i] <= 'f')))
			return false;
	}
	return true;
}

int luo_session_name_for_domain(const char *uuid, char *out, char *err, size_t errlen)
{
	if (!uuid || !lv_uuid_ok(uuid)) {
		kvmlu_err(err, errlen, 0, "domain UUID '%.40s' is not lowercase 8-4-4-4-12 hex",
			  uuid ? uuid : "");
		return -EINVAL;
	}
	snprintf(out, LUO_SESSION_NAME_SIZE, "%s%s", LUO_SESSION_LV_PREFIX, uuid);
	return 0;
}

bool luo_session_is_domain_name(const char *name)
{
	size_t plen = strlen(LUO_SESSION_LV_PREFIX);

	return name && !strncmp(name, LUO_SESSION_LV_PREFIX, plen) && lv_uuid_ok(name + plen);
}

const char *luo_session_vm_name(const char *session_name)
{
	if (luo_session_name_check(session_name, NULL, 0))
		return NULL;
	return session_name + strlen(LUO_SESSION_VM_PREFIX);
}

const char *luo_session_op_name(enum luo_op op)
{
	switch (op) {
	case LUO_OP_OPEN: return "open";
	case LUO_OP_CREATE: return "CREATE_SESSION";
	case LUO_OP_RETRIEVE: return "RETRIEVE_SESSION";
	case LUO_OP_PRESERVE_FD: return "PRESERVE_FD";
	case LUO_OP_RETRIEVE_FD: return "RETRIEVE_FD";
	case LUO_OP_FINISH: return "FINISH";
	case LUO_OP_GET_NAME: return "GET_NAME";
	}
	return "unknown operation";
}

/*
 * The meanings come from kernel/liveupdate/luo_{core,session,file}.c and
 * mm/memfd_luo.c of Linux 7.3: several errnos are specific to one ioctl.
 */
const char *luo_session_error_hint(enum luo_op op, int err)
{
	if (err < 0)
		err = -err;
	if (err == ENOTTY)
		return "not a Live Update Orchestrator device (ioctl not supported)";
	switch (op) {
	case LUO_OP_OPEN:
		switch (err) {
		case ENOENT:
			return "no such device: the kernel lacks CONFIG_LIVEUPDATE "
			       "or was not booted with liveupdate=on";
		case ENODEV:
		case ENXIO:
			return "device not available: LUO is disabled in this kernel";
		case EACCES:
		case EPERM:
			return "permission denied (run as root)";
		case EBUSY:
			return "another process holds /dev/liveupdate (the agent or "
			       "another VMM; it is exclusive while open)";
		case EIO:
			return "the kernel could not read the sessions handed over "
			       "by the previous kernel (see dmesg)";
		}
		break;
	case LUO_OP_CREATE:
		switch (err) {
		case EEXIST:
			return "a session of that name already exists (another "
			       "prepare-update of this VM in progress?)";
		case EINVAL:
			return "the kernel refused the session name";
		case ENOSPC:
		case ENOMEM:
			return "the kernel has no room for another session";
		}
		break;
	case LUO_OP_RETRIEVE:
		switch (err) {
		case ENOENT:
			return "no session of that name was handed over by the "
			       "previous kernel (its VMM did not hold it at the kexec, "
			       "or it was never created)";
		case EINVAL:
			return "the session was already retrieved in this boot";
		}
		break;
	case LUO_OP_PRESERVE_FD:
		switch (err) {
		case ENOENT:
		case EOPNOTSUPP:
			return "file cannot be preserved (hugetlb? guest_memfd is "
			       "not preservable by this kernel)";
		case EBUSY:
			return "the file is already preserved in another session";
		case EEXIST:
			return "the token is already used in this session";
		case EBADF:
			return "bad file descriptor";
		case ENOSPC:
		case ENOMEM:
			return "the kernel has no room to preserve another file";
		case EFBIG:
			return "the file is too large to preserve";
		case EINVAL:
			return "the session does not accept files (retrieved, or "
			       "the system is already past its kexec)";
		}
		break;
	case LUO_OP_RETRIEVE_FD:
		switch (err) {
		case ENOENT:
			return "no file under that token in the session";
		case EINVAL:
			return "the session is not a retrieved one";
		case EIO:
		case ENOMEM:
			return "the kernel failed to restore the file";
		}
		break;
	case LUO_OP_FINISH:
		switch (err) {
		case EBUSY:
			return "a file of the session cannot be finished yet";
		case EINVAL:
			return "the session is not a retrieved one";
		}
		break;
	case LUO_OP_GET_NAME:
		break;
	}
	return "the kernel refused the request";
}

static void luo_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The device is exclusive: open it for one request, wait out other users. */
static int luo_device_open(char *err, size_t errlen)
{
	const unsigned int step_ms = 10;
	unsigned int waited = 0;
	int fd, e;

	for (;;) {
		fd = open(luo_device, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		e = errno;
		if (e == EINTR)
			continue;
		if (e == EBUSY && waited < LUO_SESSION_BUSY_WAIT_MS) {
			luo_sleep_ms(step_ms);
			waited += step_ms;
			continue;
		}
		break;
	}
	if (e == EBUSY)
		kvmlu_err(err, errlen, 0, "%s: %s; still busy after %u ms [EBUSY]",
			luo_device, luo_session_error_hint(LUO_OP_OPEN, e), waited);
	else
		kvmlu_err(err, errlen, 0, "%s: %s [%s]", luo_device,
			luo_session_error_hint(LUO_OP_OPEN, e), luo_errno_name(e));
	return -e;
}

static int luo_fail(enum luo_op op, const char *session, const char *what,
		    int e, char *err, size_t errlen)
{
	kvmlu_err(err, errlen, 0, "LUO session '%s': %s%s%s failed: %s [%s]",
		session, luo_session_op_name(op), what ? " of " : "",
		what ? what : "", luo_session_error_hint(op, e), luo_errno_name(e));
	return -e;
}

/* CREATE and RETRIEVE share the struct layout but not the meaning. */
static int luo_session_open(struct luo_session *s, const char *name, bool incoming,
			    char *err, size_t errlen)
{
	enum luo_op op = incoming ? LUO_OP_RETRIEVE : LUO_OP_CREATE;
	struct liveupdate_ioctl_create_session req;
	unsigned long cmd;
	int dev, ret, e;

	if (s->fd >= 0) {
		kvmlu_err(err, errlen, 0, "LUO session '%s': already holding session '%s'",
			name, s->name);
		return -EBUSY;
	}
	/* A domain's session or a VM's; a VM's check says what is wrong otherwise. */
	ret = luo_session_is_domain_name(name) ? 0 : luo_session_name_check(name, err, errlen);
	if (ret)
		return ret;

	_Static_assert(sizeof(struct liveupdate_ioctl_create_session) ==
		       sizeof(struct liveupdate_ioctl_retrieve_session),
		       "create and retrieve requests differ");
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.fd = -1;
	memcpy(req.name, name, strlen(name) + 1);
	cmd = incoming ? LIVEUPDATE_IOCTL_RETRIEVE_SESSION : LIVEUPDATE_IOCTL_CREATE_SESSION;

	dev = luo_device_open(err, errlen);
	if (dev < 0)
		return dev;
	ret = ioctl(dev, cmd, &req);
	e = errno;
	/* The session fd outlives the device fd; do not keep others waiting. */
	close(dev);
	if (ret < 0)
		return luo_fail(op, name, NULL, e, err, errlen);
	if (req.fd < 0) {
		kvmlu_err(err, errlen, 0, "LUO session '%s': %s returned fd %d",
			name, luo_session_op_name(op), req.fd);
		return -EIO;
	}
	s->fd = req.fd;
	s->incoming = incoming;
	s->finished = false;
	memset(s->name, 0, sizeof(s->name));
	memcpy(s->name, name, strlen(name) + 1);
	return 0;
}

int luo_session_create(struct luo_session *s, const char *name,
		       char *err, size_t errlen)
{
	return luo_session_open(s, name, false, err, errlen);
}

int luo_session_retrieve(struct luo_session *s, const char *name,
			 char *err, size_t errlen)
{
	return luo_session_open(s, name, true, err, errlen);
}

static int luo_session_require(const struct luo_session *s, enum luo_op op,
			       bool incoming, char *err, size_t errlen)
{
	if (s->fd < 0) {
		kvmlu_err(err, errlen, 0, "LUO %s: no session open", luo_session_op_name(op));
		return -EBADF;
	}
	if (s->incoming != incoming) {
		kvmlu_err(err, errlen, 0, "LUO session '%s': %s needs a%s session",
			s->name, luo_session_op_name(op),
			incoming ? " retrieved" : "n outgoing");
		return -EINVAL;
	}
	return 0;
}

int luo_session_preserve_fd(struct luo_session *s, int fd, uint64_t token,
			    const char *what, char *err, size_t errlen)
{
	struct liveupdate_session_preserve_fd req;
	char label[96];
	int ret;

	ret = luo_session_require(s, LUO_OP_PRESERVE_FD, false, err, errlen);
	if (ret)
		return ret;
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.fd = fd;
	req.token = token;
	snprintf(label, sizeof(label), "%s (fd %d, token 0x%llx)",
		 what ? what : "file", fd, (unsigned long long)token);
	if (ioctl(s->fd, LIVEUPDATE_SESSION_PRESERVE_FD, &req) < 0)
		return luo_fail(LUO_OP_PRESERVE_FD, s->name, label, errno, err, errlen);
	return 0;
}

int luo_session_retrieve_fd(struct luo_session *s, uint64_t token,
			    const char *what, int *fd, char *err, size_t errlen)
{
	struct liveupdate_session_retrieve_fd req;
	char label[96];
	int ret;

	ret = luo_session_require(s, LUO_OP_RETRIEVE_FD, true, err, errlen);
	if (ret)
		return ret;
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.fd = -1;
	req.token = token;
	snprintf(label, sizeof(label), "%s (token 0x%llx)",
		 what ? what : "file", (unsigned long long)token);
	if (ioctl(s->fd, LIVEUPDATE_SESSION_RETRIEVE_FD, &req) < 0)
		return luo_fail(LUO_OP_RETRIEVE_FD, s->name, label, errno, err, errlen);
	if (req.fd < 0) {
		kvmlu_err(err, errlen, 0, "LUO session '%s': RETRIEVE_FD of %s returned fd %d",
			s->name, label, req.fd);
		return -EIO;
	}
	*fd = req.fd;
	return 0;
}

int luo_session_finish(struct luo_session *s, char *err, size_t errlen)
{
	struct liveupdate_session_finish req;
	int ret;

	ret = luo_session_require(s, LUO_OP_FINISH, true, err, errlen);
	if (ret)
		return ret;
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	if (ioctl(s->fd, LIVEUPDATE_SESSION_FINISH, &req) < 0)
		return luo_fail(LUO_OP_FINISH, s->name, NULL, errno, err, errlen);
	s->finished = true;
	return 0;
}

int luo_session_get_name(const struct luo_session *s, char *out,
			 char *err, size_t errlen)
{
	struct liveupdate_session_get_name req;

	if (s->fd < 0) {
		kvmlu_err(err, errlen, 0, "LUO GET_NAME: no session open");
		return -EBADF;
	}
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	if (ioctl(s->fd, LIVEUPDATE_SESSION_GET_NAME, &req) < 0)
		return luo_fail(LUO_OP_GET_NAME, s->name, NULL, errno, err, errlen);
	if (!memchr(req.name, '\0', sizeof(req.name))) {
		kvmlu_err(err, errlen, 0, "LUO session '%s': GET_NAME returned an "
			"unterminated name", s->name);
		return -EIO;
	}
	memcpy(out, req.name, sizeof(req.name));
	return 0;
}

void luo_session_close(struct luo_session *s)
{
	if (s->fd >= 0)
		close(s->fd);
	luo_session_init(s);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LUO sessions: a VM's files kept across a host kexec by the Live Update
 * Orchestrator (/dev/liveupdate).
 *
 * Lifecycle of the session of one VM, named "kvmlu/vm/<vm name>":
 *   before kexec   luo_session_create() at prepare-update, then
 *                  luo_session_preserve_fd() for the state memfd and every
 *                  RAM file. The session fd stays open in the VMM until the
 *                  kexec: the kernel keeps only sessions whose fd is open at
 *                  reboot(LINUX_REBOOT_CMD_KEXEC).
 *   abort          luo_session_close() on an outgoing session: the kernel
 *                  unpreserves every file, nothing else changes.
 *   after kexec    luo_session_retrieve() by name (once per boot),
 *                  luo_session_retrieve_fd() per token, restore, then
 *                  luo_session_finish(). Closing a retrieved session also
 *                  finishes it, so a VMM that must keep the files (memory
 *                  checksum mismatch) keeps the session fd open.
 *
 * /dev/liveupdate is exclusive while open; every call here opens it, does
 * one ioctl and closes it again, so several VMMs and the agent can take
 * turns. A session fd stays valid after the device is closed.
 *
 * Functions return 0 or -errno and write a message naming what failed
 * (session name, token, the kernel's errno) into err.
 */
#ifndef KVMLU_LUO_SESSION_H
#define KVMLU_LUO_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmlu/liveupdate_uapi.h"

#define LUO_SESSION_DEVICE	"/dev/liveupdate"
/* Room for the name including its NUL, as the kernel counts it. */
#define LUO_SESSION_NAME_SIZE	LIVEUPDATE_SESSION_NAME_LENGTH
#define LUO_SESSION_VM_PREFIX	"kvmlu/vm/"
/* A libvirt domain's RAM kept in place: "kvmlu/lv/<its lowercase UUID>". */
#define LUO_SESSION_LV_PREFIX	"kvmlu/lv/"
/* How long to wait for another process to close /dev/liveupdate. */
#define LUO_SESSION_BUSY_WAIT_MS 3000

/*
 * Token scheme inside a VM's session (fixed: a newer VMM after the kexec
 * must find the files an older one preserved):
 *   LUO_TOKEN_STATE       the sealed memfd holding the VM state FDT
 *   LUO_TOKEN_RAM(i)      the file of guest RAM region i (state FDT order)
 */
#define LUO_TOKEN_STATE		0x1ULL
#define LUO_TOKEN_RAM_BASE	0x100ULL
#define LUO_TOKEN_RAM(i)	(LUO_TOKEN_RAM_BASE + (uint64_t)(i))

/* Which request failed: the same errno means different things per ioctl. */
enum luo_op {
	LUO_OP_OPEN,		/* open("/dev/liveupdate") */
	LUO_OP_CREATE,		/* LIVEUPDATE_IOCTL_CREATE_SESSION */
	LUO_OP_RETRIEVE,	/* LIVEUPDATE_IOCTL_RETRIEVE_SESSION */
	LUO_OP_PRESERVE_FD,	/* LIVEUPDATE_SESSION_PRESERVE_FD */
	LUO_OP_RETRIEVE_FD,	/* LIVEUPDATE_SESSION_RETRIEVE_FD */
	LUO_OP_FINISH,		/* LIVEUPDATE_SESSION_FINISH */
	LUO_OP_GET_NAME,	/* LIVEUPDATE_SESSION_GET_NAME */
};

struct luo_session {
	int fd;			/* session fd; -1 when there is none */
	bool incoming;		/* retrieved after a kexec, not created here */
	bool finished;		/* FINISH done: the kernel let go of the files */
	char name[LUO_SESSION_NAME_SIZE];
};

/* A session struct that holds nothing (fd -1); safe to close. */
void luo_session_init(struct luo_session *s);

/*
 * Check a full session name as the user or a journal gave it:
 * "kvmlu/vm/" then [A-Za-z0-9][A-Za-z0-9_.-]*, the whole name shorter
 * than LUO_SESSION_NAME_SIZE (so a VM name has at most 54 characters).
 * Returns 0 or -EINVAL with the reason in err.
 */
int luo_session_name_check(const char *name, char *err, size_t errlen);

/* Build "kvmlu/vm/<vm>" into out (LUO_SESSION_NAME_SIZE bytes), checked. */
int luo_session_name_for_vm(const char *vm, char *out, char *err, size_t errlen);

/*
 * "kvmlu/lv/<uuid>" into out (LUO_SESSION_NAME_SIZE bytes) for a libvirt
 * domain's UUID (8-4-4-4-12 lowercase hex). -EINVAL with the reason.
 */
int luo_session_name_for_domain(const char *uuid, char *out, char *err, size_t errlen);

/* Whether name is a domain's session name as luo_session_name_for_domain makes it. */
bool luo_session_is_domain_name(const char *name);

/* The VM name inside a valid session name, or NULL if it is not one. */
const char *luo_session_vm_name(const char *session_name);

/*
 * What an errno from the kernel means for this request, as a short
 * sentence without the session name (e.g. for ENOENT from PRESERVE_FD:
 * the file type cannot be preserved). Never NULL.
 */
const char *luo_session_error_hint(enum luo_op op, int err);

/* The name of an operation as in messages ("PRESERVE_FD"). */
const char *luo_session_op_name(enum luo_op op);

/*
 * Use another device node than /dev/liveupdate (NULL: back to the
 * default). For tests, which point it at files that are not the device.
 */
void luo_session_set_device(const char *path);

/*
 * New outgoing session; s must be initialised and hold nothing. name is a
 * VM's (luo_session_name_check) or a domain's (luo_session_is_domain_name);
 * so is retrieve's.
 */
int luo_session_create(struct luo_session *s, const char *name,
		       char *err, size_t errlen);

/* After a kexec: take the session the previous kernel kept under name. */
int luo_session_retrieve(struct luo_session *s, const char *name,
			 char *err, size_t errlen);

/*
 * Hand fd to the session under token; what names the file in messages
 * ("state memfd", "RAM region 0"). fd stays the caller's.
 */
int luo_session_preserve_fd(struct luo_session *s, int fd, uint64_t token,
			    const char *what, char *err, size_t errlen);

/* After a kexec: the file preserved under token (close-on-exec set). */
int luo_session_retrieve_fd(struct luo_session *s, uint64_t token,
			    const char *what, int *fd, char *err, size_t errlen);

/* After a kexec, once everything is restored: release the kernel's hold. */
int luo_session_finish(struct luo_session *s, char *err, size_t errlen);

/* The kernel's name of the session (out: LUO_SESSION_NAME_SIZE bytes). */
int luo_session_get_name(const struct luo_session *s, char *out,
			 char *err, size_t errlen);

/*
 * Close the session fd. Outgoing: the kernel unpreserves every file (the
 * abort path). Incoming: the kernel finishes it.
 */
void luo_session_close(struct luo_session *s);

#endif /* KVMLU_LUO_SESSION_H */

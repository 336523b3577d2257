/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live Update Orchestrator uAPI (/dev/liveupdate), values of Linux 7.3
 * include/uapi/linux/liveupdate.h. Debian 12 has no such header; when the
 * kernel's own headers are on the include path (build/kernel-headers from
 * `make kernel`) theirs are used and these definitions are skipped.
 *
 * Every struct starts with its own size so the kernel can extend it: the
 * caller sets .size = sizeof(struct ...).
 */
#ifndef KVMLU_LIVEUPDATE_UAPI_H
#define KVMLU_LIVEUPDATE_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#if defined(__has_include)
#if __has_include(<linux/liveupdate.h>)
#include <linux/liveupdate.h>
#endif
#endif

#ifndef _UAPI_LIVEUPDATE_H
#define LIVEUPDATE_IOCTL_TYPE 0xBA
#define LIVEUPDATE_SESSION_NAME_LENGTH 64

struct liveupdate_ioctl_create_session {
	__u32 size;
	__s32 fd;
	__u8 name[LIVEUPDATE_SESSION_NAME_LENGTH];
};

struct liveupdate_ioctl_retrieve_session {
	__u32 size;
	__s32 fd;
	__u8 name[LIVEUPDATE_SESSION_NAME_LENGTH];
};

struct liveupdate_session_preserve_fd {
	__u32 size;
	__s32 fd;
	__aligned_u64 token;
};

struct liveupdate_session_retrieve_fd {
	__u32 size;
	__s32 fd;
	__aligned_u64 token;
};

struct liveupdate_session_finish {
	__u32 size;
	__u32 reserved;
};

struct liveupdate_session_get_name {
	__u32 size;
	__u32 reserved;
	__u8 name[LIVEUPDATE_SESSION_NAME_LENGTH];
};

/* On /dev/liveupdate. */
#define LIVEUPDATE_IOCTL_CREATE_SESSION _IO(LIVEUPDATE_IOCTL_TYPE, 0x00)
#define LIVEUPDATE_IOCTL_RETRIEVE_SESSION _IO(LIVEUPDATE_IOCTL_TYPE, 0x01)
/* On a session fd. */
#define LIVEUPDATE_SESSION_PRESERVE_FD _IO(LIVEUPDATE_IOCTL_TYPE, 0x40)
#define LIVEUPDATE_SESSION_RETRIEVE_FD _IO(LIVEUPDATE_IOCTL_TYPE, 0x41)
#define LIVEUPDATE_SESSION_FINISH _IO(LIVEUPDATE_IOCTL_TYPE, 0x42)
#define LIVEUPDATE_SESSION_GET_NAME _IO(LIVEUPDATE_IOCTL_TYPE, 0x43)
#endif /* _UAPI_LIVEUPDATE_H */

#endif /* KVMLU_LIVEUPDATE_UAPI_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One call of the libvirt qemu hook, checked and decoded: argv (domain,
 * operation, sub-operation, extra) plus the domain XML libvirt writes on
 * stdin. Every byte is untrusted: a bad call is refused as a whole with
 * the reason, and the hook then sends nothing. No lifecycle: parsing
 * only; kvmlu_libvirt_hook.c decides what to do with the result.
 */
#ifndef KVMLU_LIBVIRT_HOOK_EVENT_H
#define KVMLU_LIBVIRT_HOOK_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#define LIBVIRT_HOOK_NAME_MAX	256	/* domain names, with the NUL */
#define LIBVIRT_HOOK_WORD_MAX	48	/* sub-operation and extra */
#define LIBVIRT_UUID_LEN	36

/* libvirt's qemu hook operations (docs/hooks.rst), in its spelling. */
enum libvirt_hook_op {
	LIBVIRT_HOOK_PREPARE,
	LIBVIRT_HOOK_START,
	LIBVIRT_HOOK_STARTED,
	LIBVIRT_HOOK_STOPPED,
	LIBVIRT_HOOK_RELEASE,
	LIBVIRT_HOOK_MIGRATE,
	LIBVIRT_HOOK_RESTORE,
	LIBVIRT_HOOK_RECONNECT,
	LIBVIRT_HOOK_ATTACH,
	LIBVIRT_HOOK_NR_OPS,
};

struct libvirt_hook_event {
	char domain[LIBVIRT_HOOK_NAME_MAX];
	char uuid[LIBVIRT_UUID_LEN + 1];
	enum libvirt_hook_op op;
	char sub[LIBVIRT_HOOK_WORD_MAX];
	char extra[LIBVIRT_HOOK_WORD_MAX];
	bool optout;		/* kvmlu:config optout="yes" in the metadata */
};

const char *libvirt_hook_op_name(enum libvirt_hook_op op);

/* Whether the agent is told about op (starting, stopping, restore, reconnect). */
bool libvirt_hook_op_reported(enum libvirt_hook_op op);

/*
 * argv as libvirt passes it to qemu.d/<name>: argv[1..4]. ev is written
 * only on success.
 */
int libvirt_hook_event_parse_args(int argc, char *const argv[],
				  struct libvirt_hook_event *ev, char *err, size_t errlen);

/*
 * The domain XML: its <name> must be ev->domain; fills ev->uuid and
 * ev->optout. ev is unchanged on error.
 */
int libvirt_hook_event_parse_xml(const char *xml, size_t len,
				 struct libvirt_hook_event *ev, char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_HOOK_EVENT_H */

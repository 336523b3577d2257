/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hook's one message to the agent, over the agent's socket:
 *
 *   -> {"cmd":"libvirt-event","id":1,"args":{"domain":"web1","uuid":"...",
 *       "op":"started","sub":"begin","extra":"-"}}
 *   <- {"ok":true,...,"id":1}
 *
 * One connection per hook call, all of it bounded by timeout_ms, so an
 * agent that is down or stuck costs libvirt at most that long. No
 * lifecycle beyond the call.
 */
#ifndef KVMLU_LIBVIRT_HOOK_NOTIFY_H
#define KVMLU_LIBVIRT_HOOK_NOTIFY_H

#include <stddef.h>

#include "agent/libvirt/libvirt_hook_event.h"

struct json_object;

#define LIBVIRT_HOOK_CMD	"libvirt-event"

/* The request's "args" (a new object), NULL on ENOMEM. */
struct json_object *libvirt_hook_notify_json(const struct libvirt_hook_event *ev);

/* Send ev to the agent at sock and wait for its answer. 0 or -errno. */
int libvirt_hook_notify(const char *sock, const struct libvirt_hook_event *ev,
			int timeout_ms, char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_HOOK_NOTIFY_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libvirt domains the hook told the agent about ({"cmd":"libvirt-event"},
 * libvirt_hook_notify.h), so `kvmlu vms` lists them next to the kvmlu-vmm
 * VMs and `kvmlu status` counts them. Opted-out domains never get here:
 * the hook filters them.
 *
 * Lifecycle: an empty table at agent start (libvirt re-runs the hook with
 * "reconnect" for every running domain when libvirtd restarts, so nothing
 * needs to persist); each event updates the domain's entry, found by
 * UUID; "stopped"/"release" keep it as stopped. When the table is full the
 * oldest stopped entry makes room; with none stopped the event is refused.
 * The table is process-wide and guarded by its own lock: events come from
 * many connection threads.
 */
#ifndef KVMLU_LIBVIRT_TRACKED_H
#define KVMLU_LIBVIRT_TRACKED_H

#include <stddef.h>
#include <stdint.h>

#include "agent/libvirt/libvirt_domains.h"
#include "agent/libvirt/libvirt_hook_event.h"

struct json_object;

#define LIBVIRT_TRACKED_MAX	LIBVIRT_DOMAINS_MAX

/*
 * The request's "args" checked: exactly domain, uuid, op, sub, extra, all
 * strings, the same rules as the hook applies to its argv and XML. ev is
 * written only on success.
 */
int libvirt_tracked_parse(struct json_object *args, struct libvirt_hook_event *ev,
			  char *err, size_t errlen);

/* Record ev at now_ns. -ENOSPC when full with every domain running. */
int libvirt_tracked_record(const struct libvirt_hook_event *ev, int64_t now_ns,
			   char *err, size_t errlen);

/* The state an op leaves a domain in: "starting", "running" or "stopped". */
const char *libvirt_tracked_state_for(enum libvirt_hook_op op);

/* Domains tracked, and how many are not stopped. */
void libvirt_tracked_count(unsigned int *total, unsigned int *active);

/* The table as a JSON array (a new object), one object per domain. */
struct json_object *libvirt_tracked_to_json(void);

/*
 * A libvirt-event's args at now_ns: checked (-EINVAL, err says why), then
 * recorded (-ENOSPC when full). kvmlu-agent's main hands this, count and
 * to_json to the agent's commands (agent_commands_set_domains()).
 */
int libvirt_tracked_event(struct json_object *args, int64_t now_ns, char *err, size_t errlen);

/* Forget everything (tests). */
void libvirt_tracked_reset(void);

#endif /* KVMLU_LIBVIRT_TRACKED_H */

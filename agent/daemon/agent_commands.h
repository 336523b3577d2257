/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's commands, one handler each: status, vms, report,
 * host-update, libvirt-event. A handler gets the validated request and the connection
 * (host-update streams {"event":...} lines on it before its reply) and
 * returns the reply object. Only one host-update runs at a time; a second
 * gets the error class "Busy".
 */
#ifndef KVMLU_AGENT_COMMANDS_H
#define KVMLU_AGENT_COMMANDS_H

#include "agent/config/agent_config.h"

#include <stddef.h>
#include <stdint.h>

struct json_object;
struct json_line_request;

/*
 * libvirt domains the hook reports (agent/libvirt/libvirt_tracked.h): set
 * once by kvmlu-agent's main, so that this library links no libvirt
 * code. Unset: no libvirt-event command, no domains in vms and status.
 */
struct agent_domain_table {
	/* libvirt-event's args at now_ns: -EINVAL refused (err says why), -ENOSPC full. */
	int (*event)(struct json_object *args, int64_t now_ns, char *err, size_t errlen);
	void (*count)(unsigned int *total, unsigned int *active);
	struct json_object *(*to_json)(void);	/* a new array, one object per domain */
};

void agent_commands_set_domains(const struct agent_domain_table *t);

/*
 * domain-replace-qemu (agent/libvirt/qemu_replace.h), set by kvmlu-agent's
 * main like the domain table. Unset: UnknownCommand.
 */
typedef struct json_object *(*agent_replace_qemu_fn)(const struct agent_config *cfg,
						    const struct json_line_request *rq);
void agent_commands_set_replace_qemu(agent_replace_qemu_fn fn);

/* The reply to one request (a new object; NULL only when out of memory). */
struct json_object *agent_commands_dispatch(const struct agent_config *cfg, int fd,
					    const struct json_line_request *rq);

/* At start: finish an update a previous agent left in state_dir. */
void agent_commands_recover(const struct agent_config *cfg);

/*
 * At start, once the socket listens (the libvirt hook reports the domains
 * it starts): the libvirt domains a kexec left pending, restored on a
 * thread of their own (agent_restore_domains: it waits for libvirtd),
 * holding the update lock so that no host-update runs meanwhile. cfg
 * must outlive the thread.
 */
void agent_commands_restore_domains(const struct agent_config *cfg);

#endif /* KVMLU_AGENT_COMMANDS_H */

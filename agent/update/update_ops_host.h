/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The real operations behind the host-update state machine: VMM control
 * sockets, kexec_file_load, LUO, state_dir, child kvmlu-vmm processes.
 * One context per update run; the outgoing journal session lives in it
 * until the kexec (or rollback closes it).
 */
#ifndef KVMLU_UPDATE_OPS_HOST_H
#define KVMLU_UPDATE_OPS_HOST_H

#include <sys/types.h>

#include "agent/config/agent_config.h"
#include "agent/journal/journal.h"
#include "agent/update/update_host_ctx.h"
#include "agent/update/update_machine.h"

struct json_object;

/*
 * Who handles libvirt domains in an update (ops->domains_*): set once by a
 * program that links agent/libvirt/ (kvmlu-agent registers
 * libvirt_update_provider), so that this library has no libvirt code in
 * it. Unset (tests, programs without libvirt): no domains.
 */
struct update_domains_provider {
	size_t ctx_size;	/* update_ops_host_init allocates this much, zeroed */
	/* From the configuration; nonzero: this update has no domains. */
	int (*init)(void *dctx, const struct agent_config *cfg);
	int (*preflight)(void *dctx, struct journal *j, char *err, size_t errlen);
	int (*prepare)(void *dctx, struct journal *j, char *err, size_t errlen);
	int (*rollback)(void *dctx, struct journal *j, char *err, size_t errlen);
	int (*restore)(void *dctx, struct journal *j, char *err, size_t errlen);
	/* A kexec left saved domains that restore has not brought back yet. */
	bool (*pending)(void *dctx);
};

void update_ops_host_set_domains(const struct update_domains_provider *p);

void update_ops_host_init(struct update_ops *ops, struct update_host_ctx *ctx,
			  const struct agent_config *cfg);
/* After the update ran (or was recovered): what init allocated. */
void update_ops_host_fini(struct update_host_ctx *ctx);

/* The event as the agent sends it to the CLI (a new object); done: VMs finished so far. */
struct json_object *update_event_json(const struct journal *j, enum update_event ev,
				      enum update_phase phase, const struct journal_vm *vm,
				      unsigned int done);

#endif /* KVMLU_UPDATE_OPS_HOST_H */

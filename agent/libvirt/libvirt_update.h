/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libvirt domains as a part of one host update: the three ops the
 * host-update state machine calls (struct update_ops domains_*), around
 * libvirt_domains.h.
 *
 *   preflight every domain listed with what would happen to its RAM and
 *             why it cannot stay in place (libvirt_ram_class.h), into the
 *             journal; libvirt_ram "refuse" refuses the update here if
 *             any domain would be saved. Nothing is touched.
 *   prepare   before the VMMs are prepared (managed save takes seconds;
 *             kvmlu-vmm VMs should not wait paused for it). With
 *             ram_in_place a domain the classifier accepts keeps its RAM
 *             in a LUO session instead (lvram_inplace.h). Dry run:
 *             suspend + resume only. After a real save the set is written
 *             to state_file, on disk like the managed save images: the
 *             next kernel reads it there.
 *   rollback  the update stopped before the kexec: every domain touched
 *             runs again; state_file removed.
 *   restore   after the kexec, in kvmlu-agent.service (ordered after
 *             libvirtd; kvmlu-restore.service runs before it and leaves
 *             the domains pending): read state_file, wait for libvirtd,
 *             start each saved domain from its managed save (an in-place
 *             one from its LUO session: lvram_inplace.h); state_file
 *             removed once each was tried (the journal has the results),
 *             kept when libvirtd does not answer.
 *   pending   state_file is there: domains wait for restore.
 * Each domain (name, uuid, what was done, its downtime from suspend to
 * running, the result) goes into the journal's libvirt_domains, shown in
 * the report next to the VMs' blackout.
 */
#ifndef KVMLU_LIBVIRT_UPDATE_H
#define KVMLU_LIBVIRT_UPDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/config/agent_config.h"
#include "agent/journal/journal.h"
#include "agent/libvirt/libvirt_domains.h"
#include "agent/update/update_ops_host.h"

#define LIBVIRT_UPDATE_STATE_FILE	AGENT_DEFAULT_LIBVIRT_STATE
/* libvirtd may still be starting (or not be installed). */
#define LIBVIRT_UPDATE_CONNECT_WAIT_MS	60000

struct libvirt_update {
	char uri[LIBVIRT_URI_MAX];	/* "" : LIBVIRT_DEFAULT_URI, optional */
	bool required;			/* uri given: not reaching libvirt is an error */
	char state_file[AGENT_PATH_MAX];
	unsigned int connect_wait_ms;
	bool ram_refuse;		/* libvirt_ram "refuse" or "in-place" (libvirt_domains.h) */
	bool ram_in_place;		/* libvirt_ram "in-place" or "in-place-or-save" */
	char qemu_config[AGENT_PATH_MAX];	/* kvmlu-qemu's: its qmp_dir */
	char save_dir[256];		/* libvirt's managed saves */
	bool prepared;			/* prepare ran: rollback has work */
	struct libvirt_domains set;
};

/*
 * uri NULL: qemu:///system, and a host without libvirtd has no domains
 * (noted, not an error). state_file NULL: LIBVIRT_UPDATE_STATE_FILE.
 */
int libvirt_update_init(struct libvirt_update *u, const char *uri, const char *state_file,
			char *err, size_t errlen);

/* The ops; ctx is a struct libvirt_update. 0 or -errno with err. */
int libvirt_update_preflight(void *ctx, struct journal *j, char *err, size_t errlen);
int libvirt_update_prepare(void *ctx, struct journal *j, char *err, size_t errlen);
int libvirt_update_rollback(void *ctx, struct journal *j, char *err, size_t errlen);
int libvirt_update_restore(void *ctx, struct journal *j, char *err, size_t errlen);
bool libvirt_update_pending(void *ctx);

/*
 * The ops for the host's update (update_ops_host_set_domains()): a
 * struct libvirt_update per update, on the configured URI (none
 * configured: qemu:///system, and a host without libvirtd has none; a
 * configured URI must answer).
 */
extern const struct update_domains_provider libvirt_update_provider;

#endif /* KVMLU_LIBVIRT_UPDATE_H */

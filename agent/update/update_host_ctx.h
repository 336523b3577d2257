/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The context of one host-update run on the real host, shared by the
 * operations before the kexec (update_ops_host.c) and after it
 * (update_ops_host_restore.c).
 */
#ifndef KVMLU_UPDATE_HOST_CTX_H
#define KVMLU_UPDATE_HOST_CTX_H

#include <stdbool.h>
#include <sys/types.h>

#include "agent/config/agent_config.h"
#include "agent/journal/journal.h"
#include "agent/update/kexec_files.h"
#include "common/luo_session.h"

struct json_object;

struct update_host_ctx {
	const struct agent_config *cfg;
	struct luo_session journal_out;	/* before kexec */
	struct luo_session journal_in;	/* after kexec */
	/* Where progress events go (the CLI's connection); may be NULL. */
	void (*emit)(void *arg, struct json_object *ev);
	void *emit_arg;
	bool quiet;			/* no progress lines on stderr */
	/*
	 * The kernel and initrd the client's rights were checked on
	 * (kexec_files.h), loaded by fd; kernel_fd -1 (a recovered update):
	 * by the journal's paths. The caller opens and closes them.
	 */
	struct kexec_files kexec;
	void *domains;			/* the domains provider's context, or NULL */
	/* The `kvmlu-vmm restore` children started, by VM name. */
	unsigned int nr_restores;
	struct {
		char name[JOURNAL_NAME_MAX];
		pid_t pid;
		char log[AGENT_PATH_MAX + 96];
	} restores[JOURNAL_MAX_VMS];
};

#endif /* KVMLU_UPDATE_HOST_CTX_H */

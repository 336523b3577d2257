// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-agent: the host daemon behind `kvmlu`.
 *
 *   kvmlu-agent [--config FILE]            serve the socket (kvmlu-agent.service)
 *   kvmlu-agent [--config FILE] --restore  after a kexec: bring back the VMs
 *                                          of the journal in LUO, then exit
 *                                          (kvmlu-restore.service, at boot,
 *                                          before libvirtd: kvmlu-vmm VMs only)
 *
 * At start the daemon first finishes an update a previous agent left in
 * state_dir (rollback: every VM it may have paused is resumed); once it
 * listens, it starts the libvirt domains a kexec left pending (restore
 * runs before libvirtd, this daemon after it) and amends their report.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/daemon/agent_commands.h"
#include "agent/config/agent_config.h"
#include "agent/daemon/agent_dirs.h"
#include "agent/daemon/agent_restore.h"
#include "agent/daemon/agent_server.h"
#include "agent/journal/journal_store.h"
#include "agent/libvirt/libvirt_tracked.h"
#include "agent/libvirt/libvirt_update.h"
#include "agent/libvirt/qemu_replace.h"
#include "agent/update/update_machine.h"
#include "agent/update/update_ops_host.h"
#include "common/luo_session.h"

/* The hook's domains (agent/libvirt/), as the agent's commands see them. */
static const struct agent_domain_table libvirt_domains = {
	.event = libvirt_tracked_event,
	.count = libvirt_tracked_count,
	.to_json = libvirt_tracked_to_json,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: kvmlu-agent [--config FILE] [--restore]\n"
		"  --config FILE  configuration (default %s; built-in defaults if absent)\n"
		"  --restore      after a kexec: restore the VMs of the LUO journal, exit\n"
		"                 (libvirt domains: the daemon, once libvirtd runs)\n",
		AGENT_CONFIG_DEFAULT_PATH);
}

static int restore(const struct agent_config *cfg)
{
	struct update_host_ctx ctx;
	struct update_ops ops;
	struct journal *j;
	char err[512];
	int ret;

	j = calloc(1, sizeof(*j));
	if (!j)
		return 1;
	update_ops_host_init(&ops, &ctx, cfg);
	/* A kernel without LUO kept no journal: the same as none (the marker may say more). */
	if (access(LUO_SESSION_DEVICE, F_OK)) {
		ret = -ENOENT;
		snprintf(err, sizeof(err), "no %s in this kernel", LUO_SESSION_DEVICE);
	} else {
		ret = journal_store_retrieve(&ctx.journal_in, j, err, sizeof(err));
		/* The LUO hint speaks of a VMM's session: say it plainly for the agent's. */
		if (ret == -ENOENT)
			snprintf(err, sizeof(err), "no session %s in this kernel", AGENT_JOURNAL_SESSION);
	}
	ret = agent_restore(cfg, &ops, ret, j, err, stdout);
	update_ops_host_fini(&ctx);
	free(j);
	return ret;
}

int main(int argc, char **argv)
{
	const char *config = NULL;
	struct agent_config cfg;
	bool do_restore = false;
	char err[512];
	int lfd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			config = argv[++i];
		} else if (!strcmp(argv[i], "--restore")) {
			do_restore = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "kvmlu-agent: unknown argument \"%s\"\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	agent_config_defaults(&cfg);
	if (config || !access(AGENT_CONFIG_DEFAULT_PATH, F_OK)) {
		if (agent_config_load(config ? config : AGENT_CONFIG_DEFAULT_PATH, &cfg, err,
				      sizeof(err))) {
			fprintf(stderr, "kvmlu-agent: %s\n", err);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (agent_dirs_make(&cfg, err, sizeof(err))) {
		/* A restore goes on: a VMM that cannot bind its socket still holds its VM. */
		fprintf(stderr, "kvmlu-agent: %s%s\n", err,
			do_restore ? " (restoring anyway)" : "");
		if (!do_restore)
			return 1;
	}
	if (do_restore)
		return restore(&cfg);

	/*
	 * libvirt domains: this program links agent/libvirt/, the library does
	 * not. Not for --restore: it runs before libvirtd (kvmlu-restore.service).
	 */
	update_ops_host_set_domains(&libvirt_update_provider);

	agent_commands_set_domains(&libvirt_domains);
	agent_commands_set_replace_qemu(qemu_replace_command);
	agent_commands_recover(&cfg);
	lfd = agent_server_listen(&cfg, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "kvmlu-agent: %s\n", err);
		return 1;
	}
	if (agent_server_remove_on_signal())
		fprintf(stderr, "kvmlu-agent: SIGTERM handler: %s (the socket file stays at exit)\n",
			strerror(errno));
	fprintf(stderr, "kvmlu-agent: listening on %s, VMs in %s\n", cfg.socket_path, cfg.run_dir);
	/* RAM held by domain-replace-qemu goes back to kvmlu-qemu here. */
	if (qemu_replace_start(&cfg, err, sizeof(err)))
		fprintf(stderr, "kvmlu-agent: %s\n", err);
	/* After a kexec: the libvirt domains `--restore` left pending (it runs before libvirtd). */
	agent_commands_restore_domains(&cfg);
	return agent_server_run(lfd, &cfg) ? 1 : 0;
}

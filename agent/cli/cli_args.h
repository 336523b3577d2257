/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command line of `kvmlu`:
 *   kvmlu [--socket PATH] host-update --kernel K [--initrd I] [--append S]
 *                                     [--dry-run] [--json]
 *   kvmlu [--socket PATH] status [--json]
 *   kvmlu [--socket PATH] vms [--json]
 *   kvmlu [--socket PATH] report [--last N] [--json]
 *   kvmlu [--socket PATH] domain-replace-qemu DOMAIN [--json]
 * Parsing only; nothing is checked on the host here.
 */
#ifndef KVMLU_CLI_ARGS_H
#define KVMLU_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

enum cli_verb {
	CLI_HELP,
	CLI_HOST_UPDATE,
	CLI_STATUS,
	CLI_VMS,
	CLI_REPORT,
	CLI_REPLACE_QEMU,
};

struct cli_args {
	enum cli_verb verb;
	const char *socket;	/* default AGENT_DEFAULT_SOCKET */
	const char *kernel, *initrd, *append;
	bool dry_run, json;
	const char *domain;	/* domain-replace-qemu: a name or UUID */
	unsigned int last;	/* report: how many updates (0: agent's default) */
};

/* 0, or -EINVAL with the message in err; argv is not modified. */
int cli_args_parse(int argc, char *const *argv, struct cli_args *a, char *err, size_t errlen);

extern const char cli_usage[];

#endif /* KVMLU_CLI_ARGS_H */

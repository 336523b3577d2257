// SPDX-License-Identifier: GPL-2.0
/* Parsing of the `kvmlu` command line (see cli_args.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cli/cli_args.h"
#include "agent/config/agent_config.h"
#include "common/err.h"

const char cli_usage[] =
	"usage: kvmlu [--socket PATH] COMMAND\n"
	"  host-update --kernel K [--initrd I] [--append S] [--dry-run] [--json]\n"
	"              replace the host kernel by kexec, keeping every VM running\n"
	"  status [--json]         the agent and the update in progress\n"
	"  vms [--json]            the VMs on this host\n"
	"  report [--last N] [--json]  the last host updates\n"
	"  domain-replace-qemu DOMAIN [--json]\n"
	"              restart a libvirt domain on a new QEMU process, its RAM kept in place\n";

static const struct {
	const char *name;
	enum cli_verb verb;
} verbs[] = {
	{ "host-update", CLI_HOST_UPDATE },
	{ "status", CLI_STATUS },
	{ "vms", CLI_VMS },
	{ "report", CLI_REPORT },
	{ "domain-replace-qemu", CLI_REPLACE_QEMU },
	{ "help", CLI_HELP },
};

/* The value of an option that takes one, or NULL with err set. */
static const char *value(int argc, char *const *argv, int *i, char *err, size_t errlen)
{
	if (*i + 1 >= argc || !argv[*i + 1][0]) {
		kvmlu_err(err, errlen, -EINVAL, "%s needs a value", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

int cli_args_parse(int argc, char *const *argv, struct cli_args *a, char *err, size_t errlen)
{
	const char *verb_name;
	bool have_verb = false;
	int i = 1;

	memset(a, 0, sizeof(*a));
	a->socket = AGENT_DEFAULT_SOCKET;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--socket")) {
			if (!(a->socket = value(argc, argv, &i, err, errlen)))
				return -EINVAL;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			a->verb = CLI_HELP;
			return 0;
		} else {
			return kvmlu_err(err, errlen, -EINVAL, "unknown option %s", argv[i]);
		}
	}
	if (i >= argc)
		return kvmlu_err(err, errlen, -EINVAL, "no command given");
	for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (!strcmp(argv[i], verbs[v].name)) {
			a->verb = verbs[v].verb;
			have_verb = true;
		}
	if (!have_verb)
		return kvmlu_err(err, errlen, -EINVAL, "unknown command \"%s\"", argv[i]);
	verb_name = argv[i];

	for (i++; i < argc; i++) {
		const char *o = argv[i];
		bool upd = a->verb == CLI_HOST_UPDATE;

		if (!strcmp(o, "--json")) {
			a->json = true;
		} else if (upd && !strcmp(o, "--kernel")) {
			if (!(a->kernel = value(argc, argv, &i, err, errlen)))
				return -EINVAL;
		} else if (upd && !strcmp(o, "--initrd")) {
			if (!(a->initrd = value(argc, argv, &i, err, errlen)))
				return -EINVAL;
		} else if (upd && !strcmp(o, "--append")) {
			/* An empty command line is a valid (if useless) choice. */
			if (i + 1 >= argc)
				return kvmlu_err(err, errlen, -EINVAL, "--append needs a value");
			a->append = argv[++i];
		} else if (upd && !strcmp(o, "--dry-run")) {
			a->dry_run = true;
		} else if (a->verb == CLI_REPLACE_QEMU && o[0] != '-' && !a->domain) {
			a->domain = o;
		} else if (a->verb == CLI_REPORT && !strcmp(o, "--last")) {
			const char *s = value(argc, argv, &i, err, errlen);
			char *end;
			long n;

			if (!s)
				return -EINVAL;
			n = strtol(s, &end, 10);
			if (*end || n < 1 || n > 100)
				return kvmlu_err(err, errlen, -EINVAL, "--last %s: not 1..100", s);
			a->last = (unsigned int)n;
		} else {
			return kvmlu_err(err, errlen, -EINVAL, "%s: unexpected argument \"%s\"",
					 verb_name, o);
		}
	}
	if (a->verb == CLI_HOST_UPDATE && !a->kernel)
		return kvmlu_err(err, errlen, -EINVAL, "host-update: --kernel is required");
	if (a->verb == CLI_REPLACE_QEMU && !a->domain)
		return kvmlu_err(err, errlen, -EINVAL, "domain-replace-qemu: DOMAIN is required");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/* kvmlu: the command line client of kvmlu-agent (usage in cli_args.h). */
#include <signal.h>
#include <stdio.h>

#include "agent/cli/cli_args.h"
#include "agent/cli/cli_commands.h"

int main(int argc, char **argv)
{
	struct cli_args a;
	char err[256];

	if (cli_args_parse(argc, argv, &a, err, sizeof(err))) {
		fprintf(stderr, "kvmlu: %s\n%s", err, cli_usage);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	switch (a.verb) {
	case CLI_HOST_UPDATE:
		return cmd_host_update(&a);
	case CLI_STATUS:
		return cmd_status(&a);
	case CLI_VMS:
		return cmd_vms(&a);
	case CLI_REPORT:
		return cmd_report(&a);
	case CLI_REPLACE_QEMU:
		return cmd_replace_qemu(&a);
	case CLI_HELP:
		break;
	}
	fputs(cli_usage, stdout);
	return 0;
}

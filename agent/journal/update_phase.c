// SPDX-License-Identifier: GPL-2.0
/* Names of the host-update phases and outcomes (see update_phase.h). */
#include <errno.h>
#include <string.h>

#include "agent/journal/update_phase.h"

static const char *const phase_names[UPDATE_NR_PHASES] = {
	[UPDATE_PREFLIGHT] = "preflight",
	[UPDATE_PREPARE] = "prepare",
	[UPDATE_LOAD_KERNEL] = "load-kernel",
	[UPDATE_STORE_JOURNAL] = "store-journal",
	[UPDATE_KEXEC] = "kexec",
	[UPDATE_RESTORE] = "restore",
	[UPDATE_VERIFY] = "verify",
	[UPDATE_ROLLBACK] = "rollback",
};

static const char *const outcome_names[UPDATE_NR_OUTCOMES] = {
	[UPDATE_RUNNING] = "running",
	[UPDATE_DONE] = "done",
	[UPDATE_DRY_RUN] = "dry-run",
	[UPDATE_REFUSED] = "refused",
	[UPDATE_ROLLED_BACK] = "rolled-back",
	[UPDATE_PARTIAL] = "partial",
	[UPDATE_FAILED] = "failed",
};

const char *update_phase_name(enum update_phase p)
{
	return (unsigned int)p < UPDATE_NR_PHASES ? phase_names[p] : "?";
}

int update_phase_parse(const char *name, enum update_phase *out)
{
	for (unsigned int i = 0; i < UPDATE_NR_PHASES; i++)
		if (!strcmp(name, phase_names[i])) {
			*out = (enum update_phase)i;
			return 0;
		}
	return -EINVAL;
}

const char *update_outcome_name(enum update_outcome o)
{
	return (unsigned int)o < UPDATE_NR_OUTCOMES ? outcome_names[o] : "?";
}

int update_outcome_parse(const char *name, enum update_outcome *out)
{
	for (unsigned int i = 0; i < UPDATE_NR_OUTCOMES; i++)
		if (!strcmp(name, outcome_names[i])) {
			*out = (enum update_outcome)i;
			return 0;
		}
	return -EINVAL;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Progress of a host update as the CLI shows it, from the agent's event
 * lines: a line per phase; while VMs are prepared (or restored, or rolled
 * back) a progress bar redrawn in place on a terminal, a plain line per VM
 * otherwise (logs, pipes).
 */
#ifndef KVMLU_PROGRESS_H
#define KVMLU_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

struct json_object;

struct progress {
	FILE *out;
	bool tty;
	bool bar_open;		/* a bar line without its newline yet */
	char last_phase[24];	/* the phase last started */
	char update_id[48];	/* from the events: the only id left if the host jumps */
};

void progress_init(struct progress *p, FILE *out, bool tty);
void progress_event(struct progress *p, struct json_object *ev);
/* End an open bar line (before printing anything else). */
void progress_close(struct progress *p);

#endif /* KVMLU_PROGRESS_H */

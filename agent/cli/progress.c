// SPDX-License-Identifier: GPL-2.0
/* Progress lines and bar of `kvmlu host-update` (see progress.h). */
#include <json-c/json.h>
#include <string.h>

#include "agent/cli/progress.h"
#include "agent/journal/journal_report.h"
#include "kvmlu/control_wire.h"

#define BAR_WIDTH 30

void progress_init(struct progress *p, FILE *out, bool tty)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->tty = tty;
}

void progress_close(struct progress *p)
{
	if (p->bar_open)
		fputc('\n', p->out);
	p->bar_open = false;
}

static const char *str(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : "";
}

static int num(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_int) ?
	       json_object_get_int(v) : 0;
}

static void vm_event(struct progress *p, struct json_object *ev)
{
	int done = num(ev, KVMLU_KEY_DONE), total = num(ev, KVMLU_KEY_TOTAL);
	const char *err = str(ev, KVMLU_KEY_ERROR);

	if (!p->tty || err[0]) {
		progress_close(p);
		fprintf(p->out, "%s: %s %s (%d/%d)%s%s\n", str(ev, KVMLU_KEY_PHASE), str(ev, KVMLU_KEY_VM),
			str(ev, KVMLU_KEY_STATE), done, total, err[0] ? ": " : "", err);
		fflush(p->out);
		return;
	}
	fprintf(p->out, "\r  %-13s [", str(ev, KVMLU_KEY_PHASE));
	for (int i = 0; i < BAR_WIDTH; i++)
		fputc(total && i < done * BAR_WIDTH / total ? '#' : '.', p->out);
	/* Padding wipes what a longer VM name left on the line. */
	fprintf(p->out, "] %d/%d %-24s", done, total, str(ev, KVMLU_KEY_VM));
	fflush(p->out);
	p->bar_open = true;
}

void progress_event(struct progress *p, struct json_object *ev)
{
	struct json_object *v;
	const char *kind = str(ev, KVMLU_KEY_EVENT), *state = str(ev, KVMLU_KEY_STATE);
	char d[32] = "";

	if (str(ev, KVMLU_KEY_UPDATE_ID)[0])
		snprintf(p->update_id, sizeof(p->update_id), "%s", str(ev, KVMLU_KEY_UPDATE_ID));
	if (!strcmp(kind, "vm")) {
		vm_event(p, ev);
		return;
	}
	progress_close(p);
	if (!strcmp(state, "start")) {
		snprintf(p->last_phase, sizeof(p->last_phase), "%s", str(ev, KVMLU_KEY_PHASE));
		fprintf(p->out, "%s: started%s\n", str(ev, KVMLU_KEY_PHASE),
			!strcmp(str(ev, KVMLU_KEY_PHASE), "kexec") ?
			" (the connection ends here; `kvmlu report` after the boot)" : "");
	} else {
		if (json_object_object_get_ex(ev, KVMLU_KEY_PHASE_NS, &v))
			report_duration(json_object_get_int64(v), d, sizeof(d));
		fprintf(p->out, "%s: %s (%s)\n", str(ev, KVMLU_KEY_PHASE),
			!strcmp(state, "end") ? "ok" : "FAILED", d);
	}
	fflush(p->out);
}

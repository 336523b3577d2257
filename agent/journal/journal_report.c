// SPDX-License-Identifier: GPL-2.0
/* Report text of a host update (see journal_report.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/journal/journal_report.h"

void report_duration(int64_t ns, char *buf, size_t len)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else if (ns < 1000000000LL)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
}

static int64_t total_ns(const struct journal *j)
{
	return j->finished_ns && j->started_ns ? j->finished_ns - j->started_ns : -1;
}

void report_format_summary(const struct journal *j, FILE *out)
{
	char total[32];

	report_duration(total_ns(j), total, sizeof(total));
	fprintf(out, "%s  %-11s %u VM(s) %u libvirt  %s%s%s%s\n", j->update_id,
		update_outcome_name(j->outcome), j->nr_vms, j->nr_domains, total,
		j->dry_run ? "  (dry run)" : "",
		j->failed_phase[0] ? "  failed in " : "", j->failed_phase);
}

static const char *or_dash(const char *s)
{
	return s[0] ? s : "-";
}

/* report_duration of a step, "-" for 0 (not sent). */
static const char *step(int64_t ns, char *buf, size_t len)
{
	report_duration(ns > 0 ? ns : -1, buf, len);
	return buf;
}

/* The VMM's own steps of the blackout, when it sent them. */
static void report_vm_steps(const struct journal_vm *vm, FILE *out)
{
	const struct journal_vm_steps *s = &vm->steps;
	char total[32], a[32], b[32], c[32], d[32];

	if (vm->vmm_prepare_ns > 0 && s->prepare_paused_ns > 0)
		fprintf(out, "  %-16s vmm prepare %s: RAM preserved %s while running, paused %s (state %s)\n",
			"", step(vm->vmm_prepare_ns, total, sizeof(total)),
			step(s->preserve_ram_ns, a, sizeof(a)),
			step(s->prepare_paused_ns, b, sizeof(b)), step(s->capture_ns, c, sizeof(c)));
	if (vm->vmm_restore_ns > 0 && s->retrieve_ns > 0)
		fprintf(out, "  %-16s vmm restore %s: retrieve %s, VM built %s, verify started %s, state %s\n",
			"", step(vm->vmm_restore_ns, total, sizeof(total)),
			step(s->retrieve_ns, a, sizeof(a)), step(s->vm_create_ns, b, sizeof(b)),
			step(s->verify_start_ns, c, sizeof(c)),
			step(s->state_restore_ns, d, sizeof(d)));
}

void report_format_text(const struct journal *j, FILE *out)
{
	char d[32];

	fprintf(out, "update %s: %s%s\n", j->update_id, update_outcome_name(j->outcome),
		j->dry_run ? " (dry run)" : "");
	if (j->failed_phase[0])
		fprintf(out, "  failed in %s: %s\n", j->failed_phase, j->error);
	fprintf(out, "  kernel %s  initrd %s\n  cmdline %s\n", or_dash(j->kernel),
		or_dash(j->initrd), or_dash(j->cmdline));

	fprintf(out, "  %-14s %12s\n", "phase", "time");
	for (unsigned int p = 0; p < UPDATE_NR_PHASES; p++) {
		const struct journal_phase_time *t = &j->phases[p];

		if (!t->start_ns)
			continue;
		report_duration(t->end_ns ? t->end_ns - t->start_ns : -1, d, sizeof(d));
		fprintf(out, "  %-14s %12s%s\n", update_phase_name((enum update_phase)p), d,
			t->failed ? "  FAILED" : (t->end_ns ? "" : "  (not finished)"));
	}
	report_duration(total_ns(j), d, sizeof(d));
	fprintf(out, "  %-14s %12s\n", "total", d);

	if (j->nr_vms) {
		fprintf(out, "  %-16s %-10s %12s  %-32s %s\n", "vm", "state", "blackout",
			"checksum at pause", "after restore");
		for (unsigned int i = 0; i < j->nr_vms; i++) {
			const struct journal_vm *vm = &j->vms[i];

			report_duration(journal_vm_blackout_ns(vm), d, sizeof(d));
			fprintf(out, "  %-16s %-10s %12s  %-32s %s%s\n", vm->name,
				journal_vm_state_name(vm->state), d, or_dash(vm->checksum),
				or_dash(vm->checksum_after),
				vm->checksum[0] && vm->checksum_after[0] ?
				(strcmp(vm->checksum, vm->checksum_after) ? "  MISMATCH" : "  equal") : "");
			/* Lazily verified: the guest ran (blackout) before all RAM was verified. */
			if (journal_vm_to_verified_ns(vm) >= 0) {
				char v[32];

				report_duration(journal_vm_to_verified_ns(vm), v, sizeof(v));
				fprintf(out, "  %-16s first guest instruction %s after the pause, all memory verified %s after it\n",
					"", d, v);
			}
			report_vm_steps(vm, out);
			if (vm->error[0])
				fprintf(out, "  %-16s error: %s\n", "", vm->error);
		}
	}
	if (j->nr_domains) {
		fprintf(out, "  %-16s %-12s %12s  %-8s %s\n", "libvirt domain", "action",
			"downtime", "result", "uuid");
		for (unsigned int i = 0; i < j->nr_domains; i++) {
			const struct libvirt_domain_report *dom = &j->domains[i];

			report_duration(libvirt_domain_downtime_ns(dom), d, sizeof(d));
			fprintf(out, "  %-16s %-12s %12s  %-8s %s\n", dom->name,
				libvirt_domain_action(dom), d, libvirt_domain_result(dom), dom->uuid);
			if (dom->ram[0])
				fprintf(out, "  %-16s ram: %s\n", "", dom->ram);
			if (dom->error[0])
				fprintf(out, "  %-16s error: %s\n", "", dom->error);
		}
	}
	for (unsigned int i = 0; i < j->nr_notes; i++)
		fprintf(out, "  note: %s\n", j->notes[i]);
}

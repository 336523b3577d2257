// SPDX-License-Identifier: GPL-2.0
/*
 * Preflight rules (see preflight.h). Each rule appends its reason; the
 * caller gets all of them at once so one run tells the operator
 * everything that is wrong.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/update/preflight.h"

#define MIB ((uint64_t)1 << 20)

/* Items joined by a separator in a fixed buffer, cut short when it is full; n counts them all. */
struct text_list {
	char *buf;
	size_t len, used;
	unsigned int n;
};

static void list_vadd(struct text_list *l, const char *sep, const char *fmt, va_list ap)
{
	int n;

	l->n++;
	if (!l->buf || l->used + strlen(sep) + 1 >= l->len)
		return;
	if (l->n > 1)
		l->used += (size_t)snprintf(l->buf + l->used, l->len - l->used, "%s", sep);
	n = vsnprintf(l->buf + l->used, l->len - l->used, fmt, ap);
	if (n > 0)
		l->used += (size_t)n;
	if (l->used >= l->len)
		l->used = l->len - 1;
}

static void list_add(struct text_list *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void list_add(struct text_list *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	list_vadd(l, ", ", fmt, ap);
	va_end(ap);
}

static void refuse(struct text_list *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void refuse(struct text_list *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	list_vadd(r, "; ", fmt, ap);
	va_end(ap);
}

/*
 * The next kernel boots on scratch memory alone until it has taken over
 * the preserved pages, and its early allocations grow with the machine:
 * the memory map (64-byte struct page per 4 KiB page), the KHO tracking
 * of preserved pages (budgeted at 8 bytes a page, generous for order-0
 * folios), the decompressed kernel (~4x the image) and a fixed reserve.
 * Too little scratch panics the next kernel early in boot, after the
 * point of no return, so the estimate errs high.
 */
uint64_t preflight_scratch_estimate(const struct host_facts *h, uint64_t preserved)
{
	return h->mem_total / 64 + preserved / 512 + h->kernel_bytes * 4 + 16 * MIB;
}

bool preflight_cmdline_has(const char *cmdline, const char *name)
{
	static const char *const yes[] = { "on", "1", "y", "yes", "true", NULL };
	size_t nlen = strlen(name);
	const char *p = cmdline;

	while (*p) {
		size_t tlen;

		p += strspn(p, " \t\n");
		tlen = strcspn(p, " \t\n");
		if (tlen > nlen && !strncmp(p, name, nlen) && p[nlen] == '=') {
			for (unsigned int i = 0; yes[i]; i++)
				if (tlen - nlen - 1 == strlen(yes[i]) &&
				    !strncmp(p + nlen + 1, yes[i], tlen - nlen - 1))
					return true;
		}
		p += tlen;
	}
	return false;
}

int preflight_evaluate(const struct host_facts *h, const struct vm_facts *vf,
		       struct journal *j, const struct agent_config *c,
		       char *err, size_t errlen)
{
	struct text_list r = { err, errlen, 0, 0 };
	uint64_t preserved = 0, need, unallocated = 0, unknown = 0;
	char gaps_buf[JOURNAL_TEXT_MAX] = "", small_buf[JOURNAL_TEXT_MAX] = "";
	struct text_list gaps = { gaps_buf, sizeof(gaps_buf), 0, 0 };
	struct text_list small = { small_buf, sizeof(small_buf), 0, 0 };
	unsigned int nr_unknown = 0;

	if (err && errlen)
		err[0] = 0;
	if (!h->liveupdate_dev)
		refuse(&r, "no /dev/liveupdate: this kernel has no Live Update Orchestrator "
		       "(CONFIG_LIVEUPDATE, boot with liveupdate=on)");
	if (!h->kho_enabled)
		refuse(&r, "KHO is off (%s): boot this kernel with kho=on", h->kho_why);
	if (!preflight_cmdline_has(j->cmdline, "kho"))
		refuse(&r, "the next kernel's command line lacks kho=on");
	if (!preflight_cmdline_has(j->cmdline, "liveupdate"))
		refuse(&r, "the next kernel's command line lacks liveupdate=on");

	for (unsigned int i = 0; i < j->nr_vms; i++) {
		const struct vm_facts *v = &vf[i];

		if (!v->answered) {
			refuse(&r, "VM %s: its VMM (%s) does not answer: %s",
			       j->vms[i].name, j->vms[i].control, v->why);
			continue;
		}
		if (v->protocol_why[0]) {
			refuse(&r, "VM %s: %s", j->vms[i].name, v->protocol_why);
			continue;
		}
		j->vms[i].memory_bytes = v->memory_bytes;
		preserved += v->memory_bytes;
		/*
		 * PRESERVE_FD allocates and pins every page of a RAM file,
		 * holes and swapped-out pages too, and an abort leaves them
		 * allocated: what is not in memory now is new memory then.
		 */
		if (v->resident_known) {
			uint64_t gap = v->memory_bytes > v->memory_resident ?
				       v->memory_bytes - v->memory_resident : 0;

			unallocated += gap;
			if (gap >= MIB)
				list_add(&gaps, "%s %" PRIu64 " MiB", j->vms[i].name, gap / MIB);
		} else {
			unknown += v->memory_bytes;
			nr_unknown++;
		}
		if (!v->preservable)
			refuse(&r, "VM %s: cannot be preserved: %s", j->vms[i].name, v->why);
		if (v->disk_why[0])
			refuse(&r, "VM %s: %s", j->vms[i].name, v->disk_why);
		/*
		 * Not a refusal: the update works, but with 4 KiB pages the
		 * preserve, the retrieve and the next kernel's KHO work grow
		 * with the VM's RAM, and so does its blackout.
		 */
		if (!strcmp(v->folio, "4K"))
			list_add(&small, "%s", j->vms[i].name);
		if (!strcmp(v->state, "paused"))
			journal_note(j, "VM %s is paused now; it will be running after the "
				     "update or a rollback", j->vms[i].name);
	}

	need = preflight_scratch_estimate(h, preserved);
	if (!h->scratch_bytes) {
		journal_note(j, "KHO scratch size unknown (no kho/out/scratch_len in "
			     "debugfs); estimated need %" PRIu64 " MiB", need / MIB);
	} else if (h->scratch_bytes < need) {
		refuse(&r, "KHO scratch too small: %" PRIu64 " MiB, the next kernel is "
		       "estimated to need %" PRIu64 " MiB (RAM %" PRIu64 " MiB, preserved %"
		       PRIu64 " MiB); raise kho_scratch=", h->scratch_bytes / MIB,
		       need / MIB, h->mem_total / MIB, preserved / MIB);
	} else if (h->scratch_bytes < 2 * need) {
		journal_note(j, "KHO scratch %" PRIu64 " MiB is less than twice the "
			     "estimated %" PRIu64 " MiB", h->scratch_bytes / MIB, need / MIB);
	} else {
		journal_note(j, "KHO scratch %" PRIu64 " MiB, estimated need %" PRIu64 " MiB",
			     h->scratch_bytes / MIB, need / MIB);
	}

	if (nr_unknown)
		journal_note(j, "%u VM(s) did not report memory_resident: counting all %" PRIu64
			     " MiB of their RAM as allocated by preserving", nr_unknown,
			     unknown / MIB);
	if (gaps.n)
		journal_note(j, "preserving allocates guest RAM not in memory now: %s", gaps_buf);
	if (small.n)
		journal_note(j, "guest RAM in 4 KiB pages (%s): their blackout grows with their "
			     "RAM; configs/kvmlu-thp.conf (shmem_enabled=advise) gives VMs started "
			     "after it 2 MiB folios", small_buf);
	unallocated += unknown;

	/* kexec holds a copy of kernel and initrd; each VM's state is a memfd. */
	need = h->kernel_bytes + h->initrd_bytes + j->nr_vms * MIB + c->min_free_bytes +
	       unallocated;
	if (h->mem_available < need && unallocated)
		refuse(&r, "too little free memory: %" PRIu64 " MiB available, %" PRIu64
		       " MiB needed: preserving allocates %" PRIu64 " MiB of guest RAM not in "
		       "memory now (holes, swapped out), plus kernel, initrd, VM states, "
		       "min_free_mb", h->mem_available / MIB, need / MIB, unallocated / MIB);
	else if (h->mem_available < need)
		refuse(&r, "too little free memory: %" PRIu64 " MiB available, %" PRIu64
		       " MiB needed (kernel, initrd, VM states, min_free_mb)",
		       h->mem_available / MIB, need / MIB);

	return r.n ? -EPERM : 0;
}

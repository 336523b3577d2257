// SPDX-License-Identifier: GPL-2.0
/*
 * The memory step of a resume (resume.h): the one memory checker of
 * kvmlu, for a live upgrade and a restore after a kexec alike.
 *
 * Happy path: the state's memory map is the VM's (the same regions, each
 * naming the file the plan gave for it) -> guest_memfd that could not be
 * linked is copied from the old files -> the memory is compared with the
 * checksum taken at pause, as the plan says:
 *   none  the state carries no checksum (an upgrade without one);
 *   full  every 2 MiB chunk hashed now, through a digest table, so that
 *         when the state carries the pause's chunk digests a mismatch
 *         names the chunks that changed;
 *   lazy  the RAM registered with userfaultfd (guestmem/lazy_verify.h):
 *         each chunk is verified before its first access while the guest
 *         runs, the rest in the background; where it cannot (guest_memfd,
 *         no userfaultfd, holes, no chunk digests) full instead, and the
 *         report says why.
 *
 * Unhappy paths: a state for another VM, a copy or a hash that fails:
 * -errno, nothing verified. Memory that differs is not an error here:
 * the report says so (memory_verified false), and resume_apply() and
 * resume_start() refuse such a VM, so it never runs; the caller says why
 * (resume_mismatch_desc()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/test_hooks.h"
#include "guestmem/digest_table.h"
#include "guestmem/lazy_verify.h"
#include "vmm/resume/resume.h"
#include "vmm/vm.h"

/* The state must describe the VM built: region i on the plan's file i. */
static int state_matches_vm(const struct resume_plan *p, const struct vm *vm,
			    char *err, size_t errlen)
{
	const struct state_vm *s = &p->state;

	if (s->backend != (p->backend == GUESTMEM_GUEST_MEMFD ? STATE_BACKEND_GUEST_MEMFD
							      : STATE_BACKEND_MEMFD))
		return kvmlu_err(err, errlen, -EINVAL, "state backend %s, VM %s",
				 state_backend_name(s->backend), guestmem_backend_name(p->backend));
	if (s->nr_regions != vm->mem.nr)
		return kvmlu_err(err, errlen, -EINVAL, "state has %u memory regions, VM %u",
				 s->nr_regions, vm->mem.nr);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		if (s->regions[i].token != p->ram_token_base + i || i >= p->nr_ram)
			return kvmlu_err(err, errlen, -EINVAL,
					 "state region %u names file %llu, not the %u passed", i,
					 (unsigned long long)(s->regions[i].token - p->ram_token_base),
					 p->nr_ram);
		if (s->regions[i].gpa != vm->mem.r[i].gpa || s->regions[i].size != vm->mem.r[i].size ||
		    s->regions[i].file_offset != vm->mem.r[i].fd_offset)
			return kvmlu_err(err, errlen, -EINVAL,
					 "state region %u (gpa 0x%llx size 0x%llx) is not the VM's (gpa 0x%llx size 0x%llx)",
					 i, (unsigned long long)s->regions[i].gpa,
					 (unsigned long long)s->regions[i].size,
					 (unsigned long long)vm->mem.r[i].gpa,
					 (unsigned long long)vm->mem.r[i].size);
	}
	return 0;
}

/*
 * guest_memfd on a kernel that cannot link: the old files are bound to
 * the old VM; fill this VM's fresh ones from them. The old VM is paused,
 * so the copy is stable.
 */
static int copy_guest_memfd(const struct resume_plan *p, struct vm *vm, struct resume_report *r,
			    char *err, size_t errlen)
{
	const struct state_vm *s = &p->state;

	for (uint32_t i = 0; i < s->nr_regions; i++) {
		size_t len = (size_t)s->regions[i].size;
		void *src = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, p->ram_fds[i],
				 (off_t)s->regions[i].file_offset);

		if (src == MAP_FAILED)
			return kvmlu_err(err, errlen, -errno, "mmap old guest_memfd region %u: %s",
					 i, strerror(errno));
		/*
		 * Fault the destination in one call rather than one page fault
		 * per 4 KiB inside memcpy (each is slow on these hosts); if the
		 * kernel cannot, memcpy faults them in anyway.
		 */
		(void)madvise(vm->mem.r[i].hva, len, MADV_POPULATE_WRITE);
		memcpy(vm->mem.r[i].hva, src, len);
		munmap(src, len);
		r->copied_bytes += len;
	}
	r->memory = RESUME_MEMORY_COPIED;
	return 0;
}

static void note_recorded(const struct state_vm *s, struct resume_report *r)
{
	struct guestmem_checksum c = { .hi = s->checksum_hi, .lo = s->checksum_lo };

	r->has_recorded = s->has_checksum;
	if (s->has_checksum)
		guestmem_checksum_format(&c, r->checksum_recorded);
}

/* All of it now, chunk by chunk: a mismatch names the chunks that differ. */
static int verify_full(const struct state_vm *s, struct vm *vm, struct resume_report *r,
		       char *err, size_t errlen)
{
	struct guestmem_checksum c = { 0 };
	struct guestmem_digest_table t;
	uint64_t t0 = kvmlu_mono_ns();
	int ret;

	ret = guestmem_digest_table_init(&t, &vm->mem);
	if (!ret)
		ret = guestmem_digest_table_refresh(&t, 0, NULL, NULL);
	if (!ret)
		ret = guestmem_digest_table_sum(&t, &c.hi, &c.lo);
	if (ret) {
		guestmem_digest_table_free(&t);
		return kvmlu_err(err, errlen, ret, "%s: memory checksum: %s", vm->name,
				 strerror(-ret));
	}
	guestmem_checksum_format(&c, r->checksum_now);
	r->checksum_ns = kvmlu_mono_ns() - t0;
	r->memory_verified = s->has_checksum && c.hi == s->checksum_hi && c.lo == s->checksum_lo;
	/* state_validate() checked the count against the same regions. */
	if (!r->memory_verified && s->nr_chunk_digests == t.nr_chunks) {
		for (uint64_t i = t.nr_chunks; i-- > 0;) {
			if (t.digest[i].hi == s->chunk_digests[i].hi &&
			    t.digest[i].lo == s->chunk_digests[i].lo)
				continue;
			r->chunks_differ++;
			r->first_differ_chunk = i;
		}
	}
	r->nr_chunks = t.nr_chunks;
	guestmem_digest_table_free(&t);
	snprintf(r->verification, sizeof(r->verification), "%s",
		 r->memory_verified ? "verified" : "mismatch");
	r->verified_wall_ns = kvmlu_wall_ns();
	return 0;
}

/* The verifier takes the chunk digests recorded at pause; the guest may run. */
static int verify_lazy_start(const struct state_vm *s, struct vm *vm, struct resume_report *r,
			     char *err, size_t errlen)
{
	struct guestmem_lazy_verify_config cfg = { 0 };
	struct guestmem_chunk_digest *d;
	uint64_t n = guestmem_digest_chunks(&vm->mem);
	int ret;

	/* KVM maps guest_memfd pages from the file, not through our mapping. */
	if (vm->mem.backend == GUESTMEM_GUEST_MEMFD)
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "guest_memfd RAM is not faulted in through a userspace mapping");
	if (!s->has_checksum || !s->chunk_digests || s->nr_chunk_digests != n)
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "the state carries no chunk digests (format 1.0, or no checksum)");
	d = malloc((size_t)n * sizeof(*d));
	if (!d)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		d[i] = (struct guestmem_chunk_digest){ .hi = s->chunk_digests[i].hi,
						       .lo = s->chunk_digests[i].lo };
	cfg.gm = &vm->mem;
	/*
	 * Test hook: no background pass, so that only the guest's touches
	 * verify (harness: the guest, not a background thread, meets the
	 * changed chunk). Never set by the agent.
	 */
	cfg.fault_only = test_hook_lazy_fault_only();
	cfg.expect = d;
	cfg.nr_expect = n;
	ret = guestmem_lazy_verify_start(&r->lazy, &cfg, err, errlen);
	free(d);
	if (ret)
		return ret;
	r->nr_chunks = n;
	snprintf(r->verification, sizeof(r->verification), "running");
	return 0;
}

int resume_verify(struct resume_plan *p, struct vm *vm, struct resume_report *r,
		  char *err, size_t errlen)
{
	const struct state_vm *s = &p->state;
	uint64_t t0 = kvmlu_mono_ns();
	char why[256] = "";
	int ret;

	if (!p->have_state)
		return kvmlu_err(err, errlen, -EINVAL, "%s: no state to verify against", vm->name);
	/* A verdict of an earlier attempt says nothing about this VM. */
	r->memory_verified = r->has_recorded = false;
	r->checksum_recorded[0] = r->checksum_now[0] = '\0';
	r->verification[0] = r->verify_fallback[0] = '\0';
	r->nr_chunks = r->chunks_differ = r->first_differ_chunk = 0;
	r->verified_wall_ns = r->checksum_ns = 0;
	r->verify_mode = p->verify;
	ret = state_matches_vm(p, vm, err, errlen);
	if (!ret && r->memory == RESUME_MEMORY_COPY)
		ret = copy_guest_memfd(p, vm, r, err, errlen);
	if (ret)
		goto out;
	if (p->verify == RESUME_VERIFY_NONE)
		goto out;
	note_recorded(s, r);
	if (p->verify == RESUME_VERIFY_LAZY) {
		ret = verify_lazy_start(s, vm, r, why, sizeof(why));
		if (!ret)
			goto out;
		r->verify_mode = RESUME_VERIFY_FULL;
	} else if (p->verify_why) {
		snprintf(why, sizeof(why), "%s", p->verify_why);
	}
	snprintf(r->verify_fallback, sizeof(r->verify_fallback), "%s", why);
	ret = verify_full(s, vm, r, err, errlen);
out:
	r->verify_ns = kvmlu_mono_ns() - t0;
	return ret;
}

const char *resume_verify_mode_name(enum resume_verify_mode m)
{
	return m == RESUME_VERIFY_LAZY ? "lazy" : m == RESUME_VERIFY_FULL ? "sync" : "";
}

bool resume_verify_failed(const struct resume_report *r)
{
	struct guestmem_lazy_verify_stats st;

	if (!r->lazy)
		return false;
	guestmem_lazy_verify_stats(r->lazy, &st);
	return st.bad || st.error;
}

bool resume_memory_ok(const struct resume_report *r)
{
	if (r->verify_mode == RESUME_VERIFY_NONE || r->memory_verified)
		return true;
	return r->lazy && !resume_verify_failed(r);
}

void resume_mismatch_desc(const struct resume_report *r, char *buf, size_t len)
{
	char chunks[128] = "";

	if (r->chunks_differ)
		snprintf(chunks, sizeof(chunks),
			 " (%llu of %llu chunks of 2 MiB differ, the first is chunk %llu)",
			 (unsigned long long)r->chunks_differ, (unsigned long long)r->nr_chunks,
			 (unsigned long long)r->first_differ_chunk);
	snprintf(buf, len, "recorded at pause %s, now %s%s",
		 r->has_recorded ? r->checksum_recorded : "(none)",
		 r->checksum_now[0] ? r->checksum_now : "(not computed)", chunks);
}

void resume_verify_note(struct resume_report *r)
{
	struct guestmem_lazy_verify_stats st;

	if (!r->lazy)
		return;
	guestmem_lazy_verify_stats(r->lazy, &st);
	r->verify_chunks_done = st.verified + st.bad;
	r->verify_faults = st.faults;
	r->verify_fault_chunks = st.fault_hashed;
	r->verify_threads = st.threads;
	r->chunks_differ = st.bad;
	if (st.bad)
		r->first_differ_chunk = st.first_bad;
	if (st.done)
		r->checksum_ns = st.done_ns - st.started_ns;
}

void resume_verify_verdict(struct resume_report *r)
{
	struct guestmem_checksum c = { 0 };
	struct guestmem_lazy_verify_stats st;

	if (!r->lazy)
		return;
	guestmem_lazy_verify_stats(r->lazy, &st);
	resume_verify_note(r);
	if (!guestmem_lazy_verify_sum(r->lazy, &c.hi, &c.lo))
		guestmem_checksum_format(&c, r->checksum_now);
	r->memory_verified = st.done && !st.bad && !st.error && r->has_recorded &&
			     !strcmp(r->checksum_now, r->checksum_recorded);
	r->verified_wall_ns = kvmlu_wall_ns();
	snprintf(r->verification, sizeof(r->verification), "%s",
		 r->memory_verified ? "verified" : st.error ? "failed" : "mismatch");
}

void resume_verify_settle(struct resume_report *r)
{
	if (!r->lazy)
		return;
	guestmem_lazy_verify_drain(r->lazy);
	guestmem_lazy_verify_wait(r->lazy, 60000);
	resume_verify_verdict(r);
}

void resume_verify_stop(struct resume_report *r)
{
	if (!r->lazy)
		return;
	guestmem_lazy_verify_stop(r->lazy);
	r->lazy = NULL;
}

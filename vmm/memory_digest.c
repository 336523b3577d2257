// SPDX-License-Identifier: GPL-2.0
/*
 * The memory checksum of a VM, hashed while it runs and finished in the
 * pause (memory_digest.h). The correctness argument, in order:
 *  1. logging is on before the first hash of any chunk, so every write
 *     after that hash is in some later log;
 *  2. each collection clears the log before the chunks it names are
 *     hashed again, so a write during a hash is in the next log;
 *  3. finish() collects once more with every vCPU out of KVM_RUN: no
 *     write can follow, and every stale chunk is hashed there.
 * So at the end each digest is of its chunk's bytes at pause, and the
 * sum is the full checksum of the paused memory. Chunks the running
 * phase had no time for are simply still stale at step 3. Any doubt (a failed
 * collection) marks everything stale: slower, never wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "vmm/memory_digest.h"
#include "vmm/vm.h"

/* Rounds while running, and the dirty share at which more would not pay. */
#define MEMORY_DIGEST_MAX_ROUNDS	4
#define MEMORY_DIGEST_FEW_CHUNKS_SHIFT	6	/* 1/64 of all chunks */
int memory_digest_running_ms_arg(json_object *args, const char *cmd, unsigned int *ms,
				 struct json_line_error *e)
{
	json_object *v;
	int64_t t;

	*ms = MEMORY_DIGEST_RUNNING_MS_DEFAULT;
	if (!args || !json_object_object_get_ex(args, MEMORY_DIGEST_RUNNING_MS_ARG, &v))
		return 0;
	t = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || t < 0 || t > MEMORY_DIGEST_RUNNING_MS_MAX)
		return json_line_error_set(e, KVMLU_ERR_INVALID, "%s: args.%s must be 0..%u",
					   cmd, MEMORY_DIGEST_RUNNING_MS_ARG,
					   MEMORY_DIGEST_RUNNING_MS_MAX);
	*ms = (unsigned int)t;
	return 0;
}

int memory_digest_start(struct vm *vm, struct memory_digest *md, unsigned int running_ms,
			char *err, size_t errlen)
{
	char why[256] = "";
	uint64_t t0 = kvmlu_mono_ns(), n = 0;
	int ret;

	memset(md, 0, sizeof(*md));
	md->log.vm_fd = -1;
	md->running_budget_ms = running_ms;
	ret = guestmem_digest_table_init(&md->table, &vm->mem);
	if (ret)
		return kvmlu_err(err, errlen, ret, "memory digest table: %s", strerror(-ret));
	if (!running_ms) {
		snprintf(md->why_full, sizeof(md->why_full),
			 "%s is 0: every chunk is hashed in the pause", MEMORY_DIGEST_RUNNING_MS_ARG);
		return 0;
	}
	ret = guestmem_dirty_log_start(&md->log, &vm->mem, vm->vm_fd, why, sizeof(why));
	if (ret) {
		/* Not an error: the whole checksum is taken in the pause instead. */
		snprintf(md->why_full, sizeof(md->why_full), "%s", why);
		return 0;
	}
	md->logging = true;
	md->deadline_ns = t0 + (uint64_t)running_ms * 1000000ULL;
	ret = guestmem_digest_table_refresh_by(&md->table, 0, md->deadline_ns, &n, &md->threads);
	if (ret) {
		guestmem_digest_table_mark_all(&md->table);
		snprintf(md->why_full, sizeof(md->why_full), "hashing while running: %s",
			 strerror(-ret));
	}
	md->running_chunks += n;
	md->running_ns += kvmlu_mono_ns() - t0;
	return 0;
}

void memory_digest_converge(struct vm *vm, struct memory_digest *md)
{
	uint64_t few = md->table.nr_chunks >> MEMORY_DIGEST_FEW_CHUNKS_SHIFT;

	(void)vm;
	while (md->logging && md->rounds < MEMORY_DIGEST_MAX_ROUNDS &&
	       kvmlu_mono_ns() < md->deadline_ns) {
		uint64_t t0 = kvmlu_mono_ns(), n = 0;
		char why[256];

		if (guestmem_dirty_log_collect(&md->log, &md->table, NULL, why, sizeof(why))) {
			/* finish() will mark everything and say why. */
			return;
		}
		if (guestmem_digest_table_refresh_by(&md->table, 0, md->deadline_ns, &n, NULL))
			return;
		md->rounds++;
		md->running_chunks += n;
		md->running_ns += kvmlu_mono_ns() - t0;
		/* The guest writes about this much per round: the pause will too. */
		if (n <= few)
			break;
	}
}

int memory_digest_finish(struct vm *vm, struct memory_digest *md, struct guestmem_checksum *out,
			 char *err, size_t errlen)
{
	uint64_t t0 = kvmlu_mono_ns(), pages = 0;
	char why[256] = "";
	int ret;

	if (vm_get_state(vm) == VM_STATE_RUNNING)
		return kvmlu_err(err, errlen, -EBUSY, "memory digest: the vCPUs still run");
	if (!md->table.gm) {
		ret = guestmem_digest_table_init(&md->table, &vm->mem);
		if (ret)
			return kvmlu_err(err, errlen, ret, "memory digest table: %s", strerror(-ret));
	}
	if (!md->logging) {
		guestmem_digest_table_mark_all(&md->table);
	} else if (guestmem_dirty_log_collect(&md->log, &md->table, &pages, why, sizeof(why))) {
		guestmem_digest_table_mark_all(&md->table);
		snprintf(md->why_full, sizeof(md->why_full), "%s", why);
	}
	md->paused_dirty_pages = pages;
	ret = guestmem_digest_table_refresh(&md->table, 0, &md->paused_chunks, &md->threads);
	if (!ret)
		ret = guestmem_digest_table_sum(&md->table, &out->hi, &out->lo);
	if (ret)
		return kvmlu_err(err, errlen, ret, "memory checksum: %s", strerror(-ret));
	md->paused_ns = kvmlu_mono_ns() - t0;
	out->bytes = vm->mem.total;
	out->nsec = md->paused_ns;
	out->threads = md->threads;
	return 0;
}

void memory_digest_take_log(struct memory_digest *md, struct guestmem_dirty_log *out)
{
	*out = md->log;
	memset(&md->log, 0, sizeof(md->log));
	md->log.vm_fd = -1;
	md->logging = false;
}

void memory_digest_release(struct memory_digest *md)
{
	guestmem_dirty_log_stop(&md->log);
	md->logging = false;
	guestmem_digest_table_free(&md->table);
}

void memory_digest_report(const struct memory_digest *md, json_object *o)
{
	bool incremental = md->running_chunks > 0 && !md->why_full[0];

	json_object_object_add(o, KVMLU_KEY_SUM_INCREMENTAL, json_object_new_boolean(incremental));
	if (!incremental)
		json_object_object_add(o, KVMLU_KEY_SUM_FULL_REASON, json_object_new_string(
			md->why_full[0] ? md->why_full : "the VM was not running"));
	json_object_object_add(o, KVMLU_KEY_SUM_PAUSED_NS, json_line_new_u64(md->paused_ns));
	json_object_object_add(o, KVMLU_KEY_SUM_PAUSED_CHUNKS, json_line_new_u64(md->paused_chunks));
	json_object_object_add(o, KVMLU_KEY_SUM_DIRTY_PAGES, json_line_new_u64(md->paused_dirty_pages));
	json_object_object_add(o, KVMLU_KEY_SUM_RUNNING_NS, json_line_new_u64(md->running_ns));
	json_object_object_add(o, KVMLU_KEY_SUM_RUNNING_CHUNKS, json_line_new_u64(md->running_chunks));
	json_object_object_add(o, KVMLU_KEY_SUM_ROUNDS, json_object_new_int64((int64_t)md->rounds));
	json_object_object_add(o, KVMLU_KEY_SUM_RUNNING_BUDGET_MS,
			       json_object_new_int64((int64_t)md->running_budget_ms));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * update-status of a VMM that restored its VM after a kexec
 * (docs/control-protocol.md, update-status). The restore's facts live on
 * the main thread (struct live_update_restore); the control thread must
 * not read them while the main thread writes. So at each point worth
 * telling (restoring, held, running, lazy progress twice a second, the
 * verdict, FINISH) the main thread makes the reply object here and keeps
 * it under a lock; update-status answers with a copy of the last one.
 */
#include <pthread.h>

#include "common/json_line.h"
#include "vmm/live_update/live_update.h"

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static json_object *status_last;	/* NULL until the first publish */

static json_object *restore_status_make(const struct live_update_restore *lu)
{
	const struct resume_report *r = &lu->report;
	bool lazy = r->verify_mode == RESUME_VERIFY_LAZY;
	json_object *o = json_object_new_object();

	json_object_object_add(o, KVMLU_KEY_PHASE, json_object_new_string(
		lu->phase ? lu->phase : lu->session.finished ? "restored" : "restoring"));
	json_object_object_add(o, KVMLU_KEY_REASON, json_object_new_string(lu->reason));
	json_object_object_add(o, KVMLU_KEY_SESSION, json_object_new_string(lu->session.name));
	json_object_object_add(o, KVMLU_KEY_VERIFIED, json_object_new_boolean(r->memory_verified));
	json_object_object_add(o, KVMLU_KEY_SUM_RECORDED,
			       json_object_new_string(r->checksum_recorded));
	json_object_object_add(o, KVMLU_KEY_SUM_NOW, json_object_new_string(r->checksum_now));
	json_object_object_add(o, KVMLU_KEY_SESSION_FINISHED,
			       json_object_new_boolean(lu->session.finished));
	json_object_object_add(o, KVMLU_KEY_PAUSED_AT, json_line_new_u64(lu->paused_wall_ns));
	json_object_object_add(o, KVMLU_KEY_RESTORE_STARTED_AT,
			       json_line_new_u64(lu->started_wall_ns));
	json_object_object_add(o, KVMLU_KEY_RESUMED_AT, json_line_new_u64(lu->resumed_wall_ns));
	json_object_object_add(o, KVMLU_KEY_RETRIEVE_NS, json_line_new_u64(lu->retrieve_ns));
	json_object_object_add(o, KVMLU_KEY_CHECKSUM_NS, json_line_new_u64(r->checksum_ns));
	/* restore_ns's parts: the resume pipeline's build, memory and apply steps. */
	json_object_object_add(o, KVMLU_KEY_VM_CREATE_NS, json_line_new_u64(r->build_ns));
	json_object_object_add(o, KVMLU_KEY_VERIFY_START_NS, json_line_new_u64(r->verify_ns));
	json_object_object_add(o, KVMLU_KEY_STATE_RESTORE_NS, json_line_new_u64(r->apply_ns));
	json_object_object_add(o, KVMLU_KEY_RESTORE_NS, json_line_new_u64(
		lu->resumed_wall_ns > lu->started_wall_ns ?
		lu->resumed_wall_ns - lu->started_wall_ns : 0));
	json_object_object_add(o, KVMLU_KEY_TSC_ADJUSTED, json_object_new_boolean(r->tsc_adjusted));
	json_object_object_add(o, KVMLU_KEY_TSC_SHIFT, json_object_new_int64(r->tsc_shift));
	json_object_object_add(o, KVMLU_KEY_TSC_KHZ_SAVED, json_object_new_int64(r->tsc_khz_saved));
	json_object_object_add(o, KVMLU_KEY_TSC_KHZ_NOW, json_object_new_int64(r->tsc_khz_now));
	json_object_object_add(o, KVMLU_KEY_STATE_BYTES, json_line_new_u64(lu->state_size));
	/*
	 * Lazy verification: the guest runs from resumed_at_ns, every
	 * chunk is verified by verified_at_ns (sync: before resuming).
	 */
	json_object_object_add(o, KVMLU_KEY_VERIFY_MODE, json_object_new_string(
		r->verification[0] ? resume_verify_mode_name(r->verify_mode) : ""));
	json_object_object_add(o, KVMLU_KEY_VERIFY_FALLBACK,
			       json_object_new_string(r->verify_fallback));
	json_object_object_add(o, KVMLU_KEY_VERIFICATION,
			       json_object_new_string(r->verification[0] ? r->verification : "none"));
	json_object_object_add(o, KVMLU_KEY_VERIFIED_AT, json_line_new_u64(r->verified_wall_ns));
	json_object_object_add(o, KVMLU_KEY_TO_VERIFIED_NS, json_line_new_u64(
		r->verified_wall_ns > lu->started_wall_ns ?
		r->verified_wall_ns - lu->started_wall_ns : 0));
	json_object_object_add(o, KVMLU_KEY_VERIFY_CHUNKS, json_line_new_u64(r->nr_chunks));
	json_object_object_add(o, KVMLU_KEY_VERIFY_CHUNKS_DONE, json_line_new_u64(
		lazy ? r->verify_chunks_done : r->verified_wall_ns ? r->nr_chunks : 0));
	json_object_object_add(o, KVMLU_KEY_VERIFY_FAULTS, json_line_new_u64(r->verify_faults));
	json_object_object_add(o, KVMLU_KEY_VERIFY_FAULT_CHUNKS,
			       json_line_new_u64(r->verify_fault_chunks));
	json_object_object_add(o, KVMLU_KEY_VERIFY_THREADS, json_object_new_int64(r->verify_threads));
	return o;
}

void live_update_restore_publish(const struct live_update_restore *lu)
{
	json_object *o = restore_status_make(lu), *old;

	pthread_mutex_lock(&status_lock);
	old = status_last;
	status_last = o;
	pthread_mutex_unlock(&status_lock);
	json_object_put(old);
}

bool live_update_restore_status(json_object **out)
{
	*out = NULL;
	pthread_mutex_lock(&status_lock);
	if (status_last && json_object_deep_copy(status_last, out, NULL))
		*out = NULL;
	pthread_mutex_unlock(&status_lock);
	return *out != NULL;
}

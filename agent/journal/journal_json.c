// SPDX-License-Identifier: GPL-2.0
/*
 * Journal of a host update to and from JSON (see journal_json.h). Parsing
 * is strict: every key known, every value of its type and in range,
 * because after a kexec the journal decides which VMs the agent restores.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "agent/journal/journal_json.h"
#include "common/err.h"
#include "common/json_strict.h"
#include "common/luo_session.h"

/* ---- to JSON ---- */

static void add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static void add_i64(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

/* The keys of struct journal_vm_steps in the journal's "vmm_steps". */
static const struct {
	const char *key;
	size_t off;
} vm_step_keys[] = {
	{ "prepare_paused_ns", offsetof(struct journal_vm_steps, prepare_paused_ns) },
	{ "capture_ns", offsetof(struct journal_vm_steps, capture_ns) },
	{ "preserve_ram_ns", offsetof(struct journal_vm_steps, preserve_ram_ns) },
	{ "retrieve_ns", offsetof(struct journal_vm_steps, retrieve_ns) },
	{ "vm_create_ns", offsetof(struct journal_vm_steps, vm_create_ns) },
	{ "verify_start_ns", offsetof(struct journal_vm_steps, verify_start_ns) },
	{ "state_restore_ns", offsetof(struct journal_vm_steps, state_restore_ns) },
};
#define NR_VM_STEPS (sizeof(vm_step_keys) / sizeof(vm_step_keys[0]))

static int64_t *vm_step(struct journal_vm_steps *s, size_t i)
{
	return (int64_t *)((char *)s + vm_step_keys[i].off);
}

static struct json_object *vm_steps_to_json(const struct journal_vm_steps *s)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; o && i < NR_VM_STEPS; i++)
		add_i64(o, vm_step_keys[i].key,
			*(const int64_t *)((const char *)s + vm_step_keys[i].off));
	return o;
}

static struct json_object *vm_to_json(const struct journal_vm *vm)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	add_str(o, "name", vm->name);
	add_str(o, "control", vm->control);
	add_str(o, "session", vm->session);
	add_str(o, "state", journal_vm_state_name(vm->state));
	add_str(o, "checksum", vm->checksum);
	add_str(o, "checksum_after", vm->checksum_after);
	add_i64(o, "memory_bytes", (int64_t)vm->memory_bytes);
	add_i64(o, "paused_ns", vm->paused_ns);
	add_i64(o, "prepared_ns", vm->prepared_ns);
	add_i64(o, "resumed_ns", vm->resumed_ns);
	add_i64(o, "blackout_ns", journal_vm_blackout_ns(vm));
	add_i64(o, "verified_ns", vm->verified_ns);
	add_i64(o, "to_verified_ns", journal_vm_to_verified_ns(vm));
	add_i64(o, "vmm_prepare_ns", vm->vmm_prepare_ns);
	add_i64(o, "vmm_restore_ns", vm->vmm_restore_ns);
	json_object_object_add(o, "vmm_steps", vm_steps_to_json(&vm->steps));
	add_str(o, "error", vm->error);
	return o;
}

struct json_object *journal_to_json(const struct journal *j)
{
	struct json_object *o, *vms, *phases, *notes;

	o = json_object_new_object();
	if (!o)
		return NULL;
	json_object_object_add(o, "version", json_object_new_int(JOURNAL_VERSION));
	add_str(o, "update_id", j->update_id);
	add_str(o, "kernel", j->kernel);
	add_str(o, "initrd", j->initrd);
	add_str(o, "cmdline", j->cmdline);
	json_object_object_add(o, "dry_run", json_object_new_boolean(j->dry_run));
	add_str(o, "phase", update_phase_name(j->phase));
	add_str(o, "outcome", update_outcome_name(j->outcome));
	add_str(o, "failed_phase", j->failed_phase);
	add_str(o, "error", j->error);
	add_i64(o, "started_ns", j->started_ns);
	add_i64(o, "finished_ns", j->finished_ns);

	phases = json_object_new_object();
	for (unsigned int p = 0; p < UPDATE_NR_PHASES; p++) {
		const struct journal_phase_time *t = &j->phases[p];
		struct json_object *po;

		if (!t->start_ns)
			continue;
		po = json_object_new_object();
		add_i64(po, "start_ns", t->start_ns);
		add_i64(po, "end_ns", t->end_ns);
		json_object_object_add(po, "failed", json_object_new_boolean(t->failed));
		json_object_object_add(phases, update_phase_name((enum update_phase)p), po);
	}
	json_object_object_add(o, "phases", phases);

	notes = json_object_new_array();
	for (unsigned int i = 0; i < j->nr_notes; i++)
		json_object_array_add(notes, json_object_new_string(j->notes[i]));
	json_object_object_add(o, "notes", notes);

	vms = json_object_new_array();
	for (unsigned int i = 0; i < j->nr_vms; i++)
		json_object_array_add(vms, vm_to_json(&j->vms[i]));
	json_object_object_add(o, "vms", vms);
	json_object_object_add(o, "libvirt_domains",
			       libvirt_domain_reports_to_json(j->domains, j->nr_domains));
	return o;
}

/* ---- from JSON ---- */

struct field {
	const char *key;
	enum json_type type;
	void *dst;
	size_t size;		/* strings: buffer size */
};

static int copy_field(const struct field *f, struct json_object *v,
		      const char *where, char *err, size_t errlen)
{
	if (!json_object_is_type(v, f->type))
		return kvmlu_err(err, errlen, -EINVAL, "journal %s.%s: wrong type",
				 where, f->key);
	switch (f->type) {
	case json_type_string: {
		const char *s = json_object_get_string(v);
		size_t n = (size_t)json_object_get_string_len(v);

		if (n >= f->size || strlen(s) != n)
			return kvmlu_err(err, errlen, -EINVAL,
					 "journal %s.%s: %zu bytes, at most %zu",
					 where, f->key, n, f->size - 1);
		memcpy(f->dst, s, n + 1);
		return 0;
	}
	case json_type_int: {
		int64_t n = json_object_get_int64(v);

		if (n < -1)
			return kvmlu_err(err, errlen, -EINVAL, "journal %s.%s: %" PRId64
					 " is negative", where, f->key, n);
		*(int64_t *)f->dst = n;
		return 0;
	}
	case json_type_boolean:
		*(bool *)f->dst = json_object_get_boolean(v);
		return 0;
	default:
		return kvmlu_err(err, errlen, -EINVAL, "journal %s.%s: bad field",
				 where, f->key);
	}
}

/*
 * Every key of obj must be in fields (or in extra, handled by the caller)
 * and every field present: a journal missing a key is not ours.
 */
static int copy_fields(struct json_object *obj, const struct field *fields,
		       size_t n, const char *const *extra, const char *where,
		       char *err, size_t errlen)
{
	int ret;

	if (!json_object_is_type(obj, json_type_object))
		return kvmlu_err(err, errlen, -EINVAL, "journal %s: not an object", where);
	json_object_object_foreach(obj, key, v) {
		bool known = false;

		for (size_t i = 0; i < n && !known; i++)
			known = !strcmp(key, fields[i].key);
		for (size_t i = 0; extra && extra[i] && !known; i++)
			known = !strcmp(key, extra[i]);
		if (!known)
			return kvmlu_err(err, errlen, -EINVAL, "journal %s: unknown key \"%s\"",
					 where, key);
		(void)v;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *v;

		if (!json_object_object_get_ex(obj, fields[i].key, &v))
			return kvmlu_err(err, errlen, -EINVAL, "journal %s: no \"%s\"",
					 where, fields[i].key);
		ret = copy_field(&fields[i], v, where, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static int checksum_check(const char *s, const char *what, char *err, size_t errlen)
{
	size_t n = strlen(s);

	if (n == 0)
		return 0;
	if (n != JOURNAL_CHECKSUM_LEN || strspn(s, "0123456789abcdef") != n)
		return kvmlu_err(err, errlen, -EINVAL,
				 "journal %s: checksum \"%s\" is not %d hex digits",
				 what, s, JOURNAL_CHECKSUM_LEN);
	return 0;
}

static int vm_from_json(struct json_object *o, struct journal_vm *vm,
			unsigned int idx, char *err, size_t errlen)
{
	char state[16], where[32], session[LUO_SESSION_NAME_SIZE];
	int64_t mem, blackout;
	const struct field fields[] = {
		{ "name", json_type_string, vm->name, sizeof(vm->name) },
		{ "control", json_type_string, vm->control, sizeof(vm->control) },
		{ "session", json_type_string, vm->session, sizeof(vm->session) },
		{ "state", json_type_string, state, sizeof(state) },
		{ "checksum", json_type_string, vm->checksum, sizeof(vm->checksum) },
		{ "checksum_after", json_type_string, vm->checksum_after,
		  sizeof(vm->checksum_after) },
		{ "memory_bytes", json_type_int, &mem, 0 },
		{ "paused_ns", json_type_int, &vm->paused_ns, 0 },
		{ "prepared_ns", json_type_int, &vm->prepared_ns, 0 },
		{ "resumed_ns", json_type_int, &vm->resumed_ns, 0 },
		{ "blackout_ns", json_type_int, &blackout, 0 },
		{ "vmm_prepare_ns", json_type_int, &vm->vmm_prepare_ns, 0 },
		{ "vmm_restore_ns", json_type_int, &vm->vmm_restore_ns, 0 },
		{ "error", json_type_string, vm->error, sizeof(vm->error) },
	};
	int ret;

	snprintf(where, sizeof(where), "vms[%u]", idx);
	/* Newer than the journal format's first version: optional. */
	static const char *const optional[] = { "verified_ns", "to_verified_ns", "vmm_steps",
						NULL };
	struct json_object *v;

	ret = copy_fields(o, fields, sizeof(fields) / sizeof(fields[0]), optional,
			  where, err, errlen);
	if (ret)
		return ret;
	if (json_object_object_get_ex(o, "verified_ns", &v)) {
		if (!json_object_is_type(v, json_type_int))
			return kvmlu_err(err, errlen, -EINVAL, "journal %s: verified_ns not an integer",
					 where);
		vm->verified_ns = json_object_get_int64(v);
	}
	if (json_object_object_get_ex(o, "vmm_steps", &v)) {
		struct field steps[NR_VM_STEPS];

		for (size_t i = 0; i < NR_VM_STEPS; i++)
			steps[i] = (struct field){ vm_step_keys[i].key, json_type_int,
						   vm_step(&vm->steps, i), 0 };
		snprintf(where, sizeof(where), "vms[%u].vmm_steps", idx);
		ret = copy_fields(v, steps, NR_VM_STEPS, NULL, where, err, errlen);
		if (ret)
			return ret;
		snprintf(where, sizeof(where), "vms[%u]", idx);
	}
	if (journal_vm_state_parse(state, &vm->state))
		return kvmlu_err(err, errlen, -EINVAL, "journal %s: unknown state \"%s\"",
				 where, state);
	if (mem < 0)
		return kvmlu_err(err, errlen, -EINVAL, "journal %s: memory_bytes negative", where);
	vm->memory_bytes = (uint64_t)mem;
	ret = luo_session_name_for_vm(vm->name, session, err, errlen);
	if (ret)
		return ret;
	/* A journal naming another VM's session would restore the wrong guest. */
	if (vm->session[0] && strcmp(vm->session, session))
		return kvmlu_err(err, errlen, -EINVAL,
				 "journal %s: session \"%s\" is not VM %s's (%s)",
				 where, vm->session, vm->name, session);
	if (vm->control[0] != '/')
		return kvmlu_err(err, errlen, -EINVAL,
				 "journal %s: control \"%s\" is not an absolute path",
				 where, vm->control);
	ret = checksum_check(vm->checksum, where, err, errlen);
	if (!ret)
		ret = checksum_check(vm->checksum_after, where, err, errlen);
	return ret;
}

static int phases_from_json(struct json_object *o, struct journal *j,
			    char *err, size_t errlen)
{
	if (!json_object_is_type(o, json_type_object))
		return kvmlu_err(err, errlen, -EINVAL, "journal phases: not an object");
	json_object_object_foreach(o, key, v) {
		enum update_phase p;
		struct journal_phase_time *t;
		const struct field fields[] = {
			{ "start_ns", json_type_int, NULL, 0 },
			{ "end_ns", json_type_int, NULL, 0 },
			{ "failed", json_type_boolean, NULL, 0 },
		};
		struct field f[3];
		int ret;

		if (update_phase_parse(key, &p))
			return kvmlu_err(err, errlen, -EINVAL,
					 "journal phases: unknown phase \"%s\"", key);
		t = &j->phases[p];
		memcpy(f, fields, sizeof(f));
		f[0].dst = &t->start_ns;
		f[1].dst = &t->end_ns;
		f[2].dst = &t->failed;
		ret = copy_fields(v, f, 3, NULL, key, err, errlen);
		if (ret)
			return ret;
		if (t->start_ns <= 0)
			return kvmlu_err(err, errlen, -EINVAL,
					 "journal phases.%s: start_ns not positive", key);
	}
	return 0;
}

static int journal_from_json_into(struct json_object *obj, struct journal *j,
				  char *err, size_t errlen)
{
	static const char *const extra[] = { "version", "phases", "notes", "vms",
		"libvirt_domains", NULL };
	char phase[24], outcome[24];
	const struct field fields[] = {
		{ "update_id", json_type_string, j->update_id, sizeof(j->update_id) },
		{ "kernel", json_type_string, j->kernel, sizeof(j->kernel) },
		{ "initrd", json_type_string, j->initrd, sizeof(j->initrd) },
		{ "cmdline", json_type_string, j->cmdline, sizeof(j->cmdline) },
		{ "dry_run", json_type_boolean, &j->dry_run, 0 },
		{ "phase", json_type_string, phase, sizeof(phase) },
		{ "outcome", json_type_string, outcome, sizeof(outcome) },
		{ "failed_phase", json_type_string, j->failed_phase, sizeof(j->failed_phase) },
		{ "error", json_type_string, j->error, sizeof(j->error) },
		{ "started_ns", json_type_int, &j->started_ns, 0 },
		{ "finished_ns", json_type_int, &j->finished_ns, 0 },
	};
	struct json_object *v, *a;
	size_t n;
	int ret;

	ret = copy_fields(obj, fields, sizeof(fields) / sizeof(fields[0]), extra,
			  "top level", err, errlen);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(obj, "version", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) != JOURNAL_VERSION)
		return kvmlu_err(err, errlen, -EPROTO, "journal: version is not %d",
				 JOURNAL_VERSION);
	if (update_phase_parse(phase, &j->phase))
		return kvmlu_err(err, errlen, -EINVAL, "journal: unknown phase \"%s\"", phase);
	if (update_outcome_parse(outcome, &j->outcome))
		return kvmlu_err(err, errlen, -EINVAL, "journal: unknown outcome \"%s\"",
				 outcome);
	if (!j->update_id[0] || strspn(j->update_id, "0123456789TZ-") != strlen(j->update_id))
		return kvmlu_err(err, errlen, -EINVAL, "journal: bad update_id \"%s\"",
				 j->update_id);

	if (!json_object_object_get_ex(obj, "phases", &v))
		return kvmlu_err(err, errlen, -EINVAL, "journal: no \"phases\"");
	ret = phases_from_json(v, j, err, errlen);
	if (ret)
		return ret;

	if (!json_object_object_get_ex(obj, "notes", &a) ||
	    !json_object_is_type(a, json_type_array))
		return kvmlu_err(err, errlen, -EINVAL, "journal: \"notes\" is not an array");
	n = json_object_array_length(a);
	if (n > JOURNAL_MAX_NOTES)
		return kvmlu_err(err, errlen, -EINVAL, "journal: %zu notes, at most %d",
				 n, JOURNAL_MAX_NOTES);
	for (size_t i = 0; i < n; i++) {
		struct field f = { "notes[]", json_type_string, j->notes[i], JOURNAL_TEXT_MAX };

		ret = copy_field(&f, json_object_array_get_idx(a, i), "notes", err, errlen);
		if (ret)
			return ret;
	}
	j->nr_notes = (unsigned int)n;

	if (!json_object_object_get_ex(obj, "vms", &a) ||
	    !json_object_is_type(a, json_type_array))
		return kvmlu_err(err, errlen, -EINVAL, "journal: \"vms\" is not an array");
	n = json_object_array_length(a);
	if (n > JOURNAL_MAX_VMS)
		return kvmlu_err(err, errlen, -EINVAL, "journal: %zu VMs, at most %d",
				 n, JOURNAL_MAX_VMS);
	for (size_t i = 0; i < n; i++) {
		ret = vm_from_json(json_object_array_get_idx(a, i), &j->vms[i],
				   (unsigned int)i, err, errlen);
		if (ret)
			return ret;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(j->vms[k].name, j->vms[i].name))
				return kvmlu_err(err, errlen, -EINVAL,
						 "journal: VM %s listed twice", j->vms[i].name);
	}
	j->nr_vms = (unsigned int)n;

	if (json_object_object_get_ex(obj, "libvirt_domains", &a)) {
		char why[256];

		ret = libvirt_domain_reports_from_json(a, j->domains, &j->nr_domains, why,
						       sizeof(why));
		if (ret)
			return kvmlu_err(err, errlen, ret, "journal libvirt_domains: %s", why);
	}
	return 0;
}

int journal_from_json(struct json_object *obj, struct journal *j,
		      char *err, size_t errlen)
{
	struct journal *tmp;
	int ret;

	tmp = calloc(1, sizeof(*tmp));
	if (!tmp)
		return kvmlu_err(err, errlen, -ENOMEM, "journal: out of memory");
	ret = journal_from_json_into(obj, tmp, err, errlen);
	if (!ret)
		*j = *tmp;
	free(tmp);
	return ret;
}

/* ---- envelope ---- */

#define ENVELOPE_KEY "kvmlu-journal"
#define JOURNAL_JSON_DEPTH 32	/* json-c's default */

int journal_serialize(const struct journal *j, char **out, size_t *len)
{
	struct json_object *body, *env;
	const char *body_text, *text;
	char hash[17];
	int ret = 0;

	body = journal_to_json(j);
	if (!body)
		return -ENOMEM;
	body_text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	snprintf(hash, sizeof(hash), "%016llx",
		 (unsigned long long)XXH64(body_text, strlen(body_text), 0));
	env = json_object_new_object();
	if (!env) {
		ret = -ENOMEM;
		goto err_body;
	}
	json_object_object_add(env, ENVELOPE_KEY, json_object_new_int(JOURNAL_VERSION));
	add_str(env, "xxh64", hash);
	add_str(env, "body", body_text);
	text = json_object_to_json_string_ext(env, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	*out = strdup(text);
	if (!*out)
		ret = -ENOMEM;
	else
		*len = strlen(*out);
	json_object_put(env);
err_body:
	json_object_put(body);
	return ret;
}

/*
 * The journal is read back after a kexec from a file anyone with root
 * could have edited: as strict as the wire, a key given twice refused.
 * Not checked for UTF-8: it holds names as the agent got them, and the
 * next kernel's agent must read back what this one wrote.
 */
static struct json_object *parse_exact(const char *buf, size_t len, const char *what,
				       char *err, size_t errlen)
{
	struct json_strict_error se;
	struct json_object *o;
	int ret;

	ret = json_strict_parse(buf, len, JOURNAL_JSON_DEPTH, 0, &o, &se);
	if (ret) {
		kvmlu_err(err, errlen, ret, "journal %s: %s%s", what,
			  se.fault == JSON_STRICT_DUPLICATE ? "" : "not JSON: ", se.desc);
		return NULL;
	}
	if (!o)
		kvmlu_err(err, errlen, -EINVAL, "journal %s: null", what);
	return o;
}

int journal_parse(const char *buf, size_t len, struct journal *j,
		  char *err, size_t errlen)
{
	struct json_object *env, *v, *hash, *body_text, *body;
	char want[17];
	const char *text;
	int ret = -EINVAL;

	if (len == 0 || len > JOURNAL_MAX_BYTES || memchr(buf, 0, len))
		return kvmlu_err(err, errlen, -EINVAL,
				 "journal: %zu bytes (empty, too large or with NUL)", len);
	env = parse_exact(buf, len, "envelope", err, errlen);
	if (!env)
		return -EINVAL;
	if (!json_object_is_type(env, json_type_object) ||
	    json_object_object_length(env) != 3 ||
	    !json_object_object_get_ex(env, ENVELOPE_KEY, &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) != JOURNAL_VERSION ||
	    !json_object_object_get_ex(env, "xxh64", &hash) ||
	    !json_object_is_type(hash, json_type_string) ||
	    !json_object_object_get_ex(env, "body", &body_text) ||
	    !json_object_is_type(body_text, json_type_string)) {
		kvmlu_err(err, errlen, -EINVAL,
			  "journal: not a kvmlu journal envelope version %d", JOURNAL_VERSION);
		goto out_env;
	}
	text = json_object_get_string(body_text);
	snprintf(want, sizeof(want), "%016llx",
		 (unsigned long long)XXH64(text, strlen(text), 0));
	if (strcmp(want, json_object_get_string(hash))) {
		kvmlu_err(err, errlen, -EBADMSG,
			  "journal: checksum mismatch (stored %.16s, computed %s)",
			  json_object_get_string(hash), want);
		ret = -EBADMSG;
		goto out_env;
	}
	body = parse_exact(text, strlen(text), "body", err, errlen);
	if (!body)
		goto out_env;
	ret = journal_from_json(body, j, err, errlen);
	json_object_put(body);
out_env:
	json_object_put(env);
	return ret;
}

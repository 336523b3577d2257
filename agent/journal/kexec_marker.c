// SPDX-License-Identifier: GPL-2.0
/* The kexec marker on disk (see kexec_marker.h). */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/journal/journal_store.h"
#include "agent/journal/kexec_marker.h"
#include "common/file_read.h"
#include "common/err.h"
#include "common/json_strict.h"
#include "common/luo_session.h"

#define MARKER_KEY	"kvmlu-kexec-marker"
#define KEXEC_MARKER_DEPTH 32	/* json-c's default */

void kexec_marker_from_journal(const struct journal *j, int64_t now_ns,
			       struct kexec_marker *m)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->update_id, sizeof(m->update_id), "%s", j->update_id);
	snprintf(m->kernel, sizeof(m->kernel), "%s", j->kernel);
	m->started_ns = j->started_ns;
	m->marked_ns = now_ns;
	for (unsigned int i = 0; i < j->nr_vms; i++) {
		const struct journal_vm *vm = &j->vms[i];
		struct kexec_marker_vm *mv;

		if (vm->state != JOURNAL_VM_PREPARED)
			continue;
		mv = &m->vms[m->nr_vms++];
		memcpy(mv->name, vm->name, sizeof(mv->name));
		memcpy(mv->session, vm->session, sizeof(mv->session));
		memcpy(mv->control, vm->control, sizeof(mv->control));
	}
}

int kexec_marker_serialize(const struct kexec_marker *m, char **out, size_t *len)
{
	struct json_object *o = json_object_new_object(), *vms = json_object_new_array();
	const char *text;
	int ret = 0;

	if (!o || !vms) {
		json_object_put(o);
		json_object_put(vms);
		return -ENOMEM;
	}
	json_object_object_add(o, MARKER_KEY, json_object_new_int(KEXEC_MARKER_VERSION));
	json_object_object_add(o, "update_id", json_object_new_string(m->update_id));
	json_object_object_add(o, "started_ns", json_object_new_int64(m->started_ns));
	json_object_object_add(o, "marked_ns", json_object_new_int64(m->marked_ns));
	json_object_object_add(o, "kernel", json_object_new_string(m->kernel));
	for (unsigned int i = 0; i < m->nr_vms; i++) {
		struct json_object *v = json_object_new_object();

		if (!v) {
			ret = -ENOMEM;
			break;
		}
		json_object_object_add(v, "name", json_object_new_string(m->vms[i].name));
		json_object_object_add(v, "session", json_object_new_string(m->vms[i].session));
		json_object_object_add(v, "control", json_object_new_string(m->vms[i].control));
		json_object_array_add(vms, v);
	}
	json_object_object_add(o, "vms", vms);
	/* Slashes as they are: the file is also for the operator to read. */
	text = ret ? NULL : json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text) {
		*out = strdup(text);
		*len = strlen(text);
	}
	if (!ret && (!text || !*out))
		ret = -ENOMEM;
	json_object_put(o);
	return ret;
}

/* A string value that fits size (with its NUL) and has no NUL inside. */
static int get_str(struct json_object *o, const char *key, char *dst, size_t size,
		   char *err, size_t errlen)
{
	struct json_object *v;
	size_t n;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return kvmlu_err(err, errlen, -EINVAL, "no string \"%s\"", key);
	n = (size_t)json_object_get_string_len(v);
	if (n >= size || strlen(json_object_get_string(v)) != n)
		return kvmlu_err(err, errlen, -EINVAL, "\"%s\": %zu bytes, at most %zu",
				 key, n, size - 1);
	memcpy(dst, json_object_get_string(v), n + 1);
	return 0;
}

static int get_ns(struct json_object *o, const char *key, int64_t *dst,
		  char *err, size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return kvmlu_err(err, errlen, -EINVAL, "\"%s\" is not a time in ns", key);
	*dst = json_object_get_int64(v);
	return 0;
}

/* Exactly these keys: anything else is not a marker this agent wrote. */
static int only_keys(struct json_object *o, const char *const *keys, size_t n,
		     const char *where, char *err, size_t errlen)
{
	if (!json_object_is_type(o, json_type_object))
		return kvmlu_err(err, errlen, -EINVAL, "%s is not an object", where);
	json_object_object_foreach(o, key, v) {
		size_t i = 0;

		while (i < n && strcmp(key, keys[i]))
			i++;
		if (i == n)
			return kvmlu_err(err, errlen, -EINVAL, "%s: unknown key \"%s\"", where, key);
		(void)v;
	}
	return 0;
}

static int vm_from_json(struct json_object *o, unsigned int idx, struct kexec_marker_vm *vm,
			char *err, size_t errlen)
{
	static const char *const keys[] = { "name", "session", "control" };
	char want[LUO_SESSION_NAME_SIZE], where[32], why[192];
	int ret;

	snprintf(where, sizeof(where), "vms[%u]", idx);
	ret = only_keys(o, keys, 3, where, why, sizeof(why));
	if (!ret)
		ret = get_str(o, "name", vm->name, sizeof(vm->name), why, sizeof(why));
	if (!ret)
		ret = get_str(o, "session", vm->session, sizeof(vm->session), why, sizeof(why));
	if (!ret)
		ret = get_str(o, "control", vm->control, sizeof(vm->control), why, sizeof(why));
	/* The session is the VM's own, as journal_add_vm and prepare check. */
	if (!ret)
		ret = luo_session_name_for_vm(vm->name, want, why, sizeof(why));
	if (!ret && (strcmp(vm->session, want) || !strcmp(vm->name, JOURNAL_RESERVED_VM)))
		ret = kvmlu_err(why, sizeof(why), -EINVAL, "session \"%s\" is not VM %s's",
				vm->session, vm->name);
	if (!ret && vm->control[0] != '/')
		ret = kvmlu_err(why, sizeof(why), -EINVAL, "control \"%s\" is not absolute",
				vm->control);
	if (ret)
		return kvmlu_err(err, errlen, ret, "%s: %s", where, why);
	return 0;
}

static int marker_from_json(struct json_object *o, struct kexec_marker *m,
			    char *err, size_t errlen)
{
	static const char *const keys[] = {
		MARKER_KEY, "update_id", "started_ns", "marked_ns", "kernel", "vms",
	};
	struct json_object *v, *vms;
	size_t n;
	int ret;

	ret = only_keys(o, keys, sizeof(keys) / sizeof(keys[0]), "marker", err, errlen);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(o, MARKER_KEY, &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != KEXEC_MARKER_VERSION)
		return kvmlu_err(err, errlen, -EINVAL, "not a kvmlu kexec marker version %d",
				 KEXEC_MARKER_VERSION);
	ret = get_str(o, "update_id", m->update_id, sizeof(m->update_id), err, errlen);
	if (!ret && (!m->update_id[0] || m->update_id[0] == '.' ||
		     m->update_id[strspn(m->update_id, "0123456789TZ-")]))
		ret = kvmlu_err(err, errlen, -EINVAL, "update_id \"%s\" is not an update id",
				m->update_id);
	if (!ret)
		ret = get_ns(o, "started_ns", &m->started_ns, err, errlen);
	if (!ret)
		ret = get_ns(o, "marked_ns", &m->marked_ns, err, errlen);
	if (!ret)
		ret = get_str(o, "kernel", m->kernel, sizeof(m->kernel), err, errlen);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(o, "vms", &vms) || !json_object_is_type(vms, json_type_array))
		return kvmlu_err(err, errlen, -EINVAL, "no array \"vms\"");
	n = json_object_array_length(vms);
	if (n > JOURNAL_MAX_VMS)
		return kvmlu_err(err, errlen, -EINVAL, "%zu VMs, at most %d", n, JOURNAL_MAX_VMS);
	for (size_t i = 0; i < n; i++) {
		ret = vm_from_json(json_object_array_get_idx(vms, i), (unsigned int)i, &m->vms[i],
				   err, errlen);
		if (ret)
			return ret;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(m->vms[k].name, m->vms[i].name))
				return kvmlu_err(err, errlen, -EINVAL, "VM %s twice", m->vms[i].name);
	}
	m->nr_vms = (unsigned int)n;
	return 0;
}

int kexec_marker_parse(const char *buf, size_t len, struct kexec_marker *m,
		       char *err, size_t errlen)
{
	struct json_strict_error se;
	struct json_object *o;
	struct kexec_marker *tmp;
	int ret;

	if (len == 0 || len > KEXEC_MARKER_MAX_BYTES || memchr(buf, 0, len))
		return kvmlu_err(err, errlen, -EINVAL, "%zu bytes (empty, too large or with NUL)", len);
	tmp = calloc(1, sizeof(*tmp));
	if (!tmp)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	/* As strict as the journal it stands beside: a key given twice is refused. */
	ret = json_strict_parse(buf, len, KEXEC_MARKER_DEPTH, 0, &o, &se);
	if (ret)
		ret = kvmlu_err(err, errlen, ret, "%s%s",
				se.fault == JSON_STRICT_DUPLICATE ? "" : "not JSON: ", se.desc);
	else
		ret = marker_from_json(o, tmp, err, errlen);
	json_object_put(o);
	if (!ret)
		*m = *tmp;
	free(tmp);
	return ret;
}

static void marker_path(const char *dir, const char *suffix, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/" KEXEC_MARKER_FILE "%s", dir, suffix);
}

/* The rename (or unlink) itself on disk too: a crash right after keeps it. */
static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		ret = -errno;
	close(fd);
	return ret;
}

int kexec_marker_write(const char *dir, const struct kexec_marker *m, char *err, size_t errlen)
{
	char path[JOURNAL_PATH_MAX + 32], tmp[JOURNAL_PATH_MAX + 48];
	size_t len, done = 0;
	char *text;
	int fd, ret;

	marker_path(dir, "", path, sizeof(path));
	marker_path(dir, ".tmp", tmp, sizeof(tmp));
	ret = kexec_marker_serialize(m, &text, &len);
	if (ret)
		return kvmlu_err(err, errlen, ret, "kexec marker: out of memory");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		ret = kvmlu_err(err, errlen, -errno, "kexec marker %s: %s", tmp, strerror(errno));
		goto out;
	}
	while (!ret && done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno != EINTR)
			ret = -errno;
		else if (n > 0)
			done += (size_t)n;
	}
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (!ret)
		ret = fsync_dir(dir);
	if (ret) {
		unlink(tmp);
		kvmlu_err(err, errlen, ret, "kexec marker %s: %s", path, strerror(-ret));
	}
out:
	free(text);
	return ret;
}

int kexec_marker_read(const char *dir, struct kexec_marker *m, char *err, size_t errlen)
{
	char path[JOURNAL_PATH_MAX + 32], why[384];
	size_t len;
	char *buf;
	int ret;

	marker_path(dir, "", path, sizeof(path));
	ret = file_read_all(path, KEXEC_MARKER_MAX_BYTES, &buf, &len);
	if (ret == -ENOENT)
		return kvmlu_err(err, errlen, ret, "%s: none", path);
	if (ret)
		return kvmlu_err(err, errlen, ret, "kexec marker %s: %s", path, strerror(-ret));
	ret = kexec_marker_parse(buf, len, m, why, sizeof(why));
	free(buf);
	if (ret)
		return kvmlu_err(err, errlen, ret, "kexec marker %s: %s", path, why);
	return 0;
}

int kexec_marker_remove(const char *dir)
{
	char path[JOURNAL_PATH_MAX + 32];

	marker_path(dir, "", path, sizeof(path));
	if (unlink(path))
		return errno == ENOENT ? 0 : -errno;
	return fsync_dir(dir);
}

int kexec_marker_set_aside(const char *dir)
{
	char path[JOURNAL_PATH_MAX + 32], kept[JOURNAL_PATH_MAX + 48];

	marker_path(dir, "", path, sizeof(path));
	marker_path(dir, ".unreadable", kept, sizeof(kept));
	if (rename(path, kept))
		return errno == ENOENT ? 0 : -errno;
	return fsync_dir(dir);
}

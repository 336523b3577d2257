// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing of the agent configuration (see agent_config.h). The whole file
 * is parsed into a copy first so a refused file changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/config/agent_config.h"
#include "agent/journal/journal.h"
#include "common/err.h"
#include "common/file_read.h"
#include "common/path_name.h"
#include "common/json_strict.h"

/* The journal and its store keep these paths in sizes of their own. */
_Static_assert(AGENT_PATH_MAX == JOURNAL_PATH_MAX, "kernel, initrd, state and history dirs");
_Static_assert(AGENT_SOCK_PATH_MAX == JOURNAL_SOCK_PATH_MAX, "VM control sockets");

#define CONFIG_MAX_BYTES (64 * 1024)
#define CONFIG_DEPTH 32		/* json-c's default; the config has two levels */

void agent_config_defaults(struct agent_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket_path, sizeof(c->socket_path), "%s", AGENT_DEFAULT_SOCKET);
	snprintf(c->group, sizeof(c->group), "kvmlu");
	snprintf(c->run_dir, sizeof(c->run_dir), "/run/kvmlu/vms");
	snprintf(c->history_dir, sizeof(c->history_dir), "/var/lib/kvmlu/history");
	snprintf(c->state_dir, sizeof(c->state_dir), "/run/kvmlu/agent");
	snprintf(c->vmm_binary, sizeof(c->vmm_binary), "/usr/local/bin/kvmlu-vmm");
	snprintf(c->libvirt_state_file, sizeof(c->libvirt_state_file), "%s",
		 AGENT_DEFAULT_LIBVIRT_STATE);
	snprintf(c->qemu_config, sizeof(c->qemu_config), "%s", AGENT_DEFAULT_QEMU_CONFIG);
	snprintf(c->libvirt_save_dir, sizeof(c->libvirt_save_dir), "%s",
		 AGENT_DEFAULT_LIBVIRT_SAVE_DIR);
	c->vmm_timeout_ms = 5000;
	c->prepare_timeout_ms = 30000;
	c->restore_timeout_ms = 60000;
	c->client_idle_ms = 10000;
	c->libvirt_connect_ms = 60000;
	c->max_clients = 64;
	c->history_keep = 20;
	c->prepare_parallel = 8;
	c->min_free_bytes = 64ULL << 20;
	c->allow_kexec = false;
	c->nr_kexec_dirs = 1;
	snprintf(c->kexec_dirs[0], sizeof(c->kexec_dirs[0]), "/boot");
}

static int get_string(struct json_object *v, const char *key, char *out,
		      size_t outlen, char *err, size_t errlen)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string))
		return kvmlu_err(err, errlen, -EINVAL, "config key \"%s\": not a string", key);
	s = json_object_get_string(v);
	if (!s[0] || strlen(s) >= outlen)
		return kvmlu_err(err, errlen, -EINVAL,
				 "config key \"%s\": length %zu not in 1..%zu",
				 key, strlen(s), outlen - 1);
	if (s[0] != '/' && strcmp(key, "group"))
		return kvmlu_err(err, errlen, -EINVAL,
				 "config key \"%s\": \"%s\" is not an absolute path", key, s);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

/*
 * A libvirt connection URI: "driver[+transport]://[host]/path[?params]"
 * in printable ASCII without spaces (virConnectOpen parses the rest).
 */
static int get_uri(struct json_object *v, const char *key, char *out, size_t outlen,
		   char *err, size_t errlen)
{
	const char *s, *sep;
	size_t n;

	if (!json_object_is_type(v, json_type_string))
		return kvmlu_err(err, errlen, -EINVAL, "config key \"%s\": not a string", key);
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (!n || n >= outlen || strlen(s) != n)
		return kvmlu_err(err, errlen, -EINVAL, "config key \"%s\": length %zu not in 1..%zu",
				 key, n, outlen - 1);
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f)
			return kvmlu_err(err, errlen, -EINVAL,
					 "config key \"%s\": byte %zu (0x%02x) is not printable ASCII",
					 key, i, (unsigned char)s[i]);
	sep = strstr(s, "://");
	if (!sep || sep == s || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789+") != (size_t)(sep - s))
		return kvmlu_err(err, errlen, -EINVAL,
				 "config key \"%s\": \"%s\" is not a libvirt URI (driver://...)",
				 key, s);
	memcpy(out, s, n + 1);
	return 0;
}

static int get_uint(struct json_object *v, const char *key, uint64_t min,
		    uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	int64_t n;

	if (!json_object_is_type(v, json_type_int))
		return kvmlu_err(err, errlen, -EINVAL, "config key \"%s\": not an integer", key);
	n = json_object_get_int64(v);
	if (n < 0 || (uint64_t)n < min || (uint64_t)n > max)
		return kvmlu_err(err, errlen, -ERANGE,
				 "config key \"%s\": %lld not in %llu..%llu", key,
				 (long long)n, (unsigned long long)min,
				 (unsigned long long)max);
	*out = (uint64_t)n;
	return 0;
}

static int parse_timeouts(struct json_object *obj, struct agent_config *c,
			  char *err, size_t errlen)
{
	uint64_t n;
	int ret;

	if (!json_object_is_type(obj, json_type_object))
		return kvmlu_err(err, errlen, -EINVAL, "config key \"timeouts\": not an object");
	json_object_object_foreach(obj, key, v) {
		unsigned int *dst;

		if (!strcmp(key, "vmm_ms"))
			dst = &c->vmm_timeout_ms;
		else if (!strcmp(key, "prepare_ms"))
			dst = &c->prepare_timeout_ms;
		else if (!strcmp(key, "restore_ms"))
			dst = &c->restore_timeout_ms;
		else if (!strcmp(key, "client_idle_ms"))
			dst = &c->client_idle_ms;
		else if (!strcmp(key, "libvirt_connect_ms"))
			dst = &c->libvirt_connect_ms;
		else
			return kvmlu_err(err, errlen, -EINVAL,
					 "config: unknown key \"timeouts.%s\"", key);
		ret = get_uint(v, key, 10, 3600000, &n, err, errlen);
		if (ret)
			return ret;
		*dst = (unsigned int)n;
	}
	return 0;
}

/* kexec_dirs: 1..AGENT_KEXEC_DIRS_MAX absolute directories, trailing '/' dropped. */
static int get_kexec_dirs(struct json_object *v, struct agent_config *c, char *err, size_t errlen)
{
	size_t n;
	int ret;

	if (!json_object_is_type(v, json_type_array))
		return kvmlu_err(err, errlen, -EINVAL,
				 "config key \"kexec_dirs\": not an array of paths");
	n = json_object_array_length(v);
	if (n < 1 || n > AGENT_KEXEC_DIRS_MAX)
		return kvmlu_err(err, errlen, -EINVAL,
				 "config key \"kexec_dirs\": %zu entries, not 1..%d", n,
				 AGENT_KEXEC_DIRS_MAX);
	for (size_t i = 0; i < n; i++) {
		char *d = c->kexec_dirs[i];
		size_t len;

		ret = get_string(json_object_array_get_idx(v, i), "kexec_dirs", d,
				 sizeof(c->kexec_dirs[i]), err, errlen);
		if (ret)
			return ret;
		if (path_has_dot_component(d))
			return kvmlu_err(err, errlen, -EINVAL,
					 "config key \"kexec_dirs\": \"%s\" has . or .. in it", d);
		len = strlen(d);
		while (len > 1 && d[len - 1] == '/')
			d[--len] = '\0';
	}
	c->nr_kexec_dirs = (unsigned int)n;
	return 0;
}

static int get_libvirt_ram(struct json_object *v, struct agent_config *c, char *err,
			   size_t errlen)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string))
		return kvmlu_err(err, errlen, -EINVAL, "config key \"libvirt_ram\": not a string");
	s = json_object_get_string(v);
	if (!strcmp(s, "save"))
		c->libvirt_ram = AGENT_LIBVIRT_RAM_SAVE;
	else if (!strcmp(s, "refuse"))
		c->libvirt_ram = AGENT_LIBVIRT_RAM_REFUSE;
	else if (!strcmp(s, "in-place"))
		c->libvirt_ram = AGENT_LIBVIRT_RAM_IN_PLACE;
	else if (!strcmp(s, "in-place-or-save"))
		c->libvirt_ram = AGENT_LIBVIRT_RAM_IN_PLACE_OR_SAVE;
	else
		return kvmlu_err(err, errlen, -EINVAL, "config key \"libvirt_ram\": \"%.32s\" is "
				 "not save, refuse, in-place or in-place-or-save", s);
	return 0;
}

static int parse_key(const char *key, struct json_object *v,
		     struct agent_config *c, char *err, size_t errlen)
{
	uint64_t n;
	int ret;

	if (!strcmp(key, "socket"))
		return get_string(v, key, c->socket_path, sizeof(c->socket_path), err, errlen);
	if (!strcmp(key, "group"))
		return get_string(v, key, c->group, sizeof(c->group), err, errlen);
	if (!strcmp(key, "run_dir"))
		return get_string(v, key, c->run_dir, sizeof(c->run_dir), err, errlen);
	if (!strcmp(key, "history_dir"))
		return get_string(v, key, c->history_dir, sizeof(c->history_dir), err, errlen);
	if (!strcmp(key, "state_dir"))
		return get_string(v, key, c->state_dir, sizeof(c->state_dir), err, errlen);
	if (!strcmp(key, "vmm_binary"))
		return get_string(v, key, c->vmm_binary, sizeof(c->vmm_binary), err, errlen);
	if (!strcmp(key, "serial_dir"))
		return get_string(v, key, c->serial_dir, sizeof(c->serial_dir), err, errlen);
	if (!strcmp(key, "libvirt_uri"))
		return get_uri(v, key, c->libvirt_uri, sizeof(c->libvirt_uri), err, errlen);
	if (!strcmp(key, "libvirt_state_file"))
		return get_string(v, key, c->libvirt_state_file, sizeof(c->libvirt_state_file),
				  err, errlen);
	if (!strcmp(key, "libvirt_ram"))
		return get_libvirt_ram(v, c, err, errlen);
	if (!strcmp(key, "qemu_config"))
		return get_string(v, key, c->qemu_config, sizeof(c->qemu_config), err, errlen);
	if (!strcmp(key, "libvirt_save_dir"))
		return get_string(v, key, c->libvirt_save_dir, sizeof(c->libvirt_save_dir), err,
				  errlen);
	if (!strcmp(key, "timeouts"))
		return parse_timeouts(v, c, err, errlen);
	if (!strcmp(key, "history_keep")) {
		ret = get_uint(v, key, 1, 10000, &n, err, errlen);
		if (!ret)
			c->history_keep = (unsigned int)n;
		return ret;
	}
	if (!strcmp(key, "prepare_parallel")) {
		ret = get_uint(v, key, 1, AGENT_PREPARE_PARALLEL_MAX, &n, err, errlen);
		if (!ret)
			c->prepare_parallel = (unsigned int)n;
		return ret;
	}
	if (!strcmp(key, "max_clients")) {
		ret = get_uint(v, key, 1, AGENT_MAX_CLIENTS_MAX, &n, err, errlen);
		if (!ret)
			c->max_clients = (unsigned int)n;
		return ret;
	}
	if (!strcmp(key, "min_free_mb")) {
		ret = get_uint(v, key, 0, 1 << 24, &n, err, errlen);
		if (!ret)
			c->min_free_bytes = n << 20;
		return ret;
	}
	if (!strcmp(key, "allow_kexec")) {
		if (!json_object_is_type(v, json_type_boolean))
			return kvmlu_err(err, errlen, -EINVAL,
					 "config key \"allow_kexec\": not true/false");
		c->allow_kexec = json_object_get_boolean(v);
		return 0;
	}
	if (!strcmp(key, "kexec_dirs"))
		return get_kexec_dirs(v, c, err, errlen);
	/* "//" keys are comments: JSON has none and the example needs them. */
	if (!strncmp(key, "//", 2))
		return 0;
	return kvmlu_err(err, errlen, -EINVAL, "config: unknown key \"%s\"", key);
}

unsigned int agent_running_hash_ms(const struct agent_config *c)
{
	return c->prepare_timeout_ms / 2;
}

int agent_config_parse(const char *text, struct agent_config *c,
		       char *err, size_t errlen)
{
	struct json_strict_error se;
	struct json_object *root;
	struct agent_config tmp = *c;
	int ret;

	/*
	 * Strict, like the wire: a key given twice ("allow_kexec":false, then
	 * true) is refused, not settled by whichever json-c keeps.
	 */
	ret = json_strict_parse(text, strlen(text), CONFIG_DEPTH, JSON_STRICT_UTF8, &root, &se);
	if (ret)
		return kvmlu_err(err, errlen, ret, "config: %s%s",
				 se.fault == JSON_STRICT_DUPLICATE ? "" : "not one JSON object: ",
				 se.desc);
	if (!json_object_is_type(root, json_type_object)) {
		ret = kvmlu_err(err, errlen, -EINVAL, "config: top level is not an object");
		goto out;
	}
	json_object_object_foreach(root, key, v) {
		ret = parse_key(key, v, &tmp, err, errlen);
		if (ret)
			goto out;
	}
	*c = tmp;
out:
	json_object_put(root);
	return ret;
}

int agent_config_load(const char *path, struct agent_config *c,
		      char *err, size_t errlen)
{
	char *buf;
	size_t len = 0;
	int ret;

	ret = file_read_all(path, CONFIG_MAX_BYTES, &buf, &len);
	if (ret == -EFBIG)
		return kvmlu_err(err, errlen, ret, "config %s: larger than %d bytes", path,
				 CONFIG_MAX_BYTES);
	if (ret)
		return kvmlu_err(err, errlen, ret, "config %s: %s", path, strerror(-ret));
	if (strlen(buf) != len) {
		ret = kvmlu_err(err, errlen, -EINVAL, "config %s: contains a NUL byte", path);
		goto err_free;
	}
	ret = agent_config_parse(buf, c, err, errlen);
	if (ret) {
		char inner[256];

		snprintf(inner, sizeof(inner), "%s", err ? err : "");
		kvmlu_err(err, errlen, ret, "%s: %s", path, inner);
	}
err_free:
	free(buf);
	return ret;
}

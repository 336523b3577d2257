// SPDX-License-Identifier: GPL-2.0
/*
 * libvirt's QEMU command line for kvmlu-qemu (see qemu_argv.h). No
 * lifecycle: each call reads argv afresh; qemu_argv_rewrite inspects
 * again rather than trust a plan handed back to it.
 *
 * Reading follows QEMU 7.2's own rules (softmmu/vl.c lookup_opt): a token
 * is an option if it starts with '-' (a second '-' is allowed), and the
 * option takes the next token as its argument unless it is one of the
 * few that take none. A token that is not an option where one is due
 * (QEMU would take it as a disk image; libvirt never writes one) is
 * refused, so a value can never be mistaken for an option. -object and
 * -device values starting with '{' are JSON (QEMU's own test), read
 * strictly (common/json_strict.c: a key given twice is refused); other
 * values are QEMU's key=value lists, where ",," is a literal comma.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <json-c/json.h>

#include "agent/libvirt/qemu_argv.h"
#include "common/err.h"
#include "common/json_strict.h"

/* QEMU 7.2's options without an argument (qemu-options.hx, no HAS_ARG). */
static const char *const no_arg_opts[] = {
	"h", "help", "version", "S", "snapshot", "nographic", "no-user-config", "nodefaults",
	"no-shutdown", "no-reboot", "no-acpi", "no-hpet", "daemonize", "enable-kvm",
	"mem-prealloc", "usb", "full-screen", "portrait", "win2k-hack", "no-fd-bootchk",
	"preconfig", "only-migratable", "enable-fips", "s", "singlestep", "xen-attach",
	"xen-domid-restrict", "no-quit", "alt-grab", "ctrl-grab", "no-frame", "sdl", "curses",
	"semihosting", "enable-sync-profile", "audio-help", "async-teardown",
};

/* Devices that add guest RAM beside pc.ram: not kept in place. */
static const char *const ram_devices[] = {
	"pc-dimm", "nvdimm", "virtio-mem", "virtio-mem-pci", "virtio-mem-ccw",
	"virtio-pmem", "virtio-pmem-pci",
};

#define JSON_ARG_DEPTH	8
#define SHOWN_MAX	64
#define PAGE_SIZE_4K	4096ULL

/* One option: its name (without dashes), where it is, and its value. */
struct opt {
	const char *name;
	int at;			/* index of the option token */
	const char *val;	/* NULL for an option without argument */
	json_object *json;	/* -object/-device given as JSON */
};

struct cmdline {
	struct opt *opts;
	int nr;
};

/* tok for an error message: printable ASCII only, at most SHOWN_MAX bytes. */
static const char *shown(const char *tok, char out[SHOWN_MAX + 4])
{
	size_t i;

	for (i = 0; tok[i] && i < SHOWN_MAX; i++)
		out[i] = (tok[i] >= 0x20 && tok[i] < 0x7f) ? tok[i] : '?';
	if (tok[i])
		memcpy(out + i, "...", 4);
	else
		out[i] = '\0';
	return out;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

static void cmdline_free(struct cmdline *c)
{
	for (int i = 0; i < c->nr; i++)
		json_object_put(c->opts[i].json);
	free(c->opts);
	c->opts = NULL;
	c->nr = 0;
}

static int parse_json_value(struct opt *o, char *err, size_t errlen)
{
	struct json_strict_error je;
	int rc;

	rc = json_strict_parse(o->val, strlen(o->val), JSON_ARG_DEPTH, JSON_STRICT_UTF8, &o->json,
			       &je);
	if (rc == -ENOMEM)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	if (rc)
		return kvmlu_err(err, errlen, -EINVAL, "-%s at argument %d: not strict JSON: %s",
				 o->name, o->at + 1, je.desc);
	if (!json_object_is_type(o->json, json_type_object))
		return kvmlu_err(err, errlen, -EINVAL, "-%s at argument %d: JSON %s, not an object",
				 o->name, o->at + 1, json_type_to_name(json_object_get_type(o->json)));
	return 0;
}

static int cmdline_read(int argc, char *const argv[], struct cmdline *c, char *err, size_t errlen)
{
	char s[SHOWN_MAX + 4];
	int rc;

	c->opts = NULL;
	c->nr = 0;
	if (argc < 1 || !argv)
		return kvmlu_err(err, errlen, -EINVAL, "empty command line");
	if (argc > QEMU_ARGV_MAX)
		return kvmlu_err(err, errlen, -E2BIG, "%d arguments, at most %d read", argc,
				 QEMU_ARGV_MAX);
	c->opts = calloc((size_t)argc, sizeof(*c->opts));
	if (!c->opts)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	for (int i = 1; i < argc; i++) {
		const char *tok = argv[i];
		struct opt *o = &c->opts[c->nr];

		if (!tok || tok[0] != '-' || !tok[1] || (tok[1] == '-' && !tok[2])) {
			rc = kvmlu_err(err, errlen, -EINVAL,
				       "argument %d '%s' is not a QEMU option where one is due",
				       i, tok ? shown(tok, s) : "(null)");
			goto err_free;
		}
		o->name = tok + (tok[1] == '-' ? 2 : 1);
		o->at = i;
		c->nr++;
		if (in_list(o->name, no_arg_opts, sizeof(no_arg_opts) / sizeof(no_arg_opts[0])))
			continue;
		if (i + 1 >= argc || !argv[i + 1]) {
			rc = kvmlu_err(err, errlen, -EINVAL, "option -%s at argument %d has no value",
				       shown(o->name, s), i);
			goto err_free;
		}
		o->val = argv[++i];
		if ((!strcmp(o->name, "object") || !strcmp(o->name, "device")) && o->val[0] == '{') {
			rc = parse_json_value(o, err, errlen);
			if (rc)
				goto err_free;
		}
	}
	return 0;
err_free:
	cmdline_free(c);
	return rc;
}

/* s into out if it fits (1), else out empty (0): a cut value never matches. */
static int copy_whole(const char *s, char *out, size_t outlen)
{
	size_t n = strlen(s);

	out[0] = '\0';
	if (n >= outlen)
		return 0;
	memcpy(out, s, n + 1);
	return 1;
}

/*
 * The value of key in a QEMU key=value list (",," a literal comma); the
 * first element without '=' is the implied key's value. 1 found (out
 * holds it), 0 not found or longer than out.
 */
static int keyval_get(const char *s, const char *key, const char *implied, char *out,
		      size_t outlen)
{
	bool first = true;

	out[0] = '\0';
	while (*s) {
		char elem[256];
		size_t n = 0;
		bool cut = false;
		const char *eq;

		for (; *s; s++) {
			if (*s == ',') {
				if (s[1] != ',')
					break;
				s++;
			}
			if (n + 1 < sizeof(elem))
				elem[n++] = *s;
			else
				cut = true;
		}
		elem[n] = '\0';
		if (*s == ',')
			s++;
		eq = strchr(elem, '=');
		if (!cut && !eq && first && implied && !strcmp(key, implied))
			return copy_whole(elem, out, outlen);
		if (!cut && eq && (size_t)(eq - elem) == strlen(key) &&
		    !strncmp(elem, key, strlen(key)))
			return copy_whole(eq + 1, out, outlen);
		first = false;
	}
	return 0;
}

/* A string member of a JSON option value, or NULL. */
static const char *json_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The type an -object or -device names (qom-type, driver), into out. */
static void opt_type(const struct opt *o, const char *key, char *out, size_t outlen)
{
	const char *t;

	out[0] = '\0';
	if (o->json) {
		t = json_str(o->json, key);
		if (t)
			copy_whole(t, out, outlen);
	} else {
		keyval_get(o->val, key, key, out, outlen);
	}
}

static bool is_memory_backend(const char *type)
{
	return !strncmp(type, "memory-backend-", strlen("memory-backend-"));
}

static bool uuid_valid(const char *u)
{
	for (int i = 0; i < QEMU_ARGV_UUID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? u[i] != '-' : !((u[i] >= '0' && u[i] <= '9') ||
					    (u[i] >= 'a' && u[i] <= 'f')))
			return false;
	}
	return u[QEMU_ARGV_UUID_LEN] == '\0';
}

/* What kvmlu does with each key libvirt may give pc.ram. */
enum key_rule { KEEP, DROP, CHECKED };
static const struct {
	const char *key;
	json_type type;
	enum key_rule rule;
} memfd_keys[] = {
	{ "qom-type", json_type_string, CHECKED },
	{ "id", json_type_string, CHECKED },
	{ "size", json_type_int, CHECKED },
	{ "share", json_type_boolean, CHECKED },
	{ "x-use-canonical-path-for-ramblock-id", json_type_boolean, CHECKED },
	{ "hugetlb", json_type_boolean, CHECKED },
	{ "hugetlbsize", json_type_int, CHECKED },
	/* Preallocation would fault in all of the RAM at every start. */
	{ "prealloc", json_type_boolean, DROP },
	{ "prealloc-threads", json_type_int, DROP },
	{ "prealloc-context", json_type_string, DROP },
	/* kvmlu's memfd is not sealed; memory-backend-file has no seal. */
	{ "seal", json_type_boolean, DROP },
	{ "host-nodes", json_type_array, KEEP },
	{ "policy", json_type_string, KEEP },
	{ "dump", json_type_boolean, KEEP },
	{ "merge", json_type_boolean, KEEP },
	{ "reserve", json_type_boolean, KEEP },
};
#define NR_MEMFD_KEYS	(sizeof(memfd_keys) / sizeof(memfd_keys[0]))

static int key_index(const char *key)
{
	for (size_t i = 0; i < NR_MEMFD_KEYS; i++)
		if (!strcmp(key, memfd_keys[i].key))
			return (int)i;
	return -1;
}

/* pc.ram's keys: known, of their type, and with values kvmlu can keep. */
static int check_memfd(json_object *obj, struct qemu_argv_plan *plan, char *err, size_t errlen)
{
	char s[SHOWN_MAX + 4];
	json_object *v;
	int64_t size;
	uint64_t usize;

	json_object_object_foreach(obj, key, val) {
		int k = key_index(key);

		if (k < 0)
			return kvmlu_err(err, errlen, -EINVAL,
					 "pc.ram has key '%s', which kvmlu-qemu does not know",
					 shown(key, s));
		if (!json_object_is_type(val, memfd_keys[k].type))
			return kvmlu_err(err, errlen, -EINVAL, "pc.ram key '%s' is %s, not %s", key,
					 json_type_to_name(json_object_get_type(val)),
					 json_type_to_name(memfd_keys[k].type));
	}
	if (json_object_object_get_ex(obj, "hugetlb", &v) && json_object_get_boolean(v))
		return kvmlu_err(err, errlen, -EINVAL,
				 "pc.ram is on hugetlb pages, which kvmlu cannot keep in place");
	if (json_object_object_get_ex(obj, "hugetlbsize", NULL))
		return kvmlu_err(err, errlen, -EINVAL,
				 "pc.ram sets hugetlbsize, which kvmlu cannot keep in place");
	/* Unset, a memfd backend is shared (QEMU's default for memfd). */
	if (json_object_object_get_ex(obj, "share", &v) && !json_object_get_boolean(v))
		return kvmlu_err(err, errlen, -EINVAL,
				 "pc.ram has share=false (<access mode='private'/>): a private "
				 "mapping cannot be kept in place");
	if (!json_object_object_get_ex(obj, "x-use-canonical-path-for-ramblock-id", &v) ||
	    json_object_get_boolean(v))
		return kvmlu_err(err, errlen, -EINVAL,
				 "pc.ram without x-use-canonical-path-for-ramblock-id=false: its RAM "
				 "block would not be named pc.ram");
	if (!json_object_object_get_ex(obj, "size", &v))
		return kvmlu_err(err, errlen, -EINVAL, "pc.ram has no size");
	size = json_object_get_int64(v);
	usize = json_object_get_uint64(v);
	if (size <= 0 || usize > QEMU_ARGV_RAM_MAX || usize % PAGE_SIZE_4K)
		return kvmlu_err(err, errlen, -EINVAL,
				 "pc.ram size %s is not a multiple of 4096 in 4096..%llu",
				 json_object_to_json_string(v), (unsigned long long)QEMU_ARGV_RAM_MAX);
	plan->ram_size = usize;
	return 0;
}

/*
 * The decision, on a command line already read. *ram_at is the index in
 * c->opts of pc.ram's -object when the answer is rewrite.
 */
static int decide(const struct cmdline *c, struct qemu_argv_plan *plan, int *ram_at,
		  char *err, size_t errlen)
{
	char type[128], s[SHOWN_MAX + 4], backends[160] = "";
	const char *uuid = NULL;
	int nr_uuid = 0, nr_backends = 0, nr_ram = 0;
	bool machine_uses_ram = false;

	memset(plan, 0, sizeof(*plan));
	*ram_at = -1;
	for (int i = 0; i < c->nr; i++) {
		const struct opt *o = &c->opts[i];

		if (!strcmp(o->name, "machine") || !strcmp(o->name, "M")) {
			if (keyval_get(o->val, "type", "type", type, sizeof(type)) &&
			    !strcmp(type, "none")) {
				plan->action = QEMU_ARGV_PASS;
				snprintf(plan->why, sizeof(plan->why),
					 "a capability probe (-machine none)");
				return 0;
			}
			if (keyval_get(o->val, "memory-backend", NULL, type, sizeof(type)) &&
			    !strcmp(type, QEMU_ARGV_RAM_ID))
				machine_uses_ram = true;
		} else if (!strcmp(o->name, "uuid")) {
			uuid = o->val;
			nr_uuid++;
		} else if (!strcmp(o->name, "incoming")) {
			plan->incoming = true;
		} else if (!strcmp(o->name, "object")) {
			opt_type(o, "qom-type", type, sizeof(type));
			if (!is_memory_backend(type))
				continue;
			nr_backends++;
			if (strlen(backends) + strlen(type) + 2 < sizeof(backends))
				snprintf(backends + strlen(backends),
					 sizeof(backends) - strlen(backends), "%s%s",
					 backends[0] ? ", " : "", type);
			if (o->json && !strcmp(type, "memory-backend-memfd") && json_str(o->json, "id") &&
			    !strcmp(json_str(o->json, "id"), QEMU_ARGV_RAM_ID)) {
				nr_ram++;
				*ram_at = i;
			}
		}
	}
	if (!nr_uuid) {
		plan->action = QEMU_ARGV_PASS;
		snprintf(plan->why, sizeof(plan->why), "no -uuid: not a libvirt domain");
		return 0;
	}
	if (!nr_ram) {
		plan->action = QEMU_ARGV_PASS;
		snprintf(plan->why, sizeof(plan->why),
			 "no JSON memory-backend-memfd with id pc.ram: RAM not kept in place");
		return 0;
	}
	/* From here on the domain asks for a memfd pc.ram: keep it in place or refuse. */
	if (nr_uuid > 1)
		return kvmlu_err(err, errlen, -EINVAL, "-uuid given %d times", nr_uuid);
	if (!uuid_valid(uuid))
		return kvmlu_err(err, errlen, -EINVAL,
				 "-uuid '%s' is not a lowercase 8-4-4-4-12 hex UUID", shown(uuid, s));
	if (nr_backends > 1)
		return kvmlu_err(err, errlen, -EINVAL,
				 "%d memory backends (%s): kvmlu keeps one, pc.ram, in place",
				 nr_backends, backends);
	for (int i = 0; i < c->nr; i++) {
		const struct opt *o = &c->opts[i];

		if (!strcmp(o->name, "device")) {
			opt_type(o, "driver", type, sizeof(type));
			if (in_list(type, ram_devices, sizeof(ram_devices) / sizeof(ram_devices[0])))
				return kvmlu_err(err, errlen, -EINVAL,
						 "-device %s adds RAM that kvmlu cannot keep in place",
						 type);
		} else if (!strcmp(o->name, "mem-path")) {
			return kvmlu_err(err, errlen, -EINVAL, "-mem-path beside pc.ram");
		} else if (!strcmp(o->name, "readconfig") || !strcmp(o->name, "set")) {
			/* Objects or their options from where this reading cannot see. */
			return kvmlu_err(err, errlen, -EINVAL,
					 "-%s beside pc.ram: options kvmlu-qemu cannot check", o->name);
		} else if (!strcmp(o->name, "global") && strstr(o->val, "memory-backend")) {
			/* -global reaches objects too (compat props): share=off, say. */
			return kvmlu_err(err, errlen, -EINVAL,
					 "-global '%s' would change pc.ram's backend", shown(o->val, s));
		}
	}
	if (!machine_uses_ram)
		return kvmlu_err(err, errlen, -EINVAL,
				 "no -machine memory-backend=pc.ram: the guest would not run on pc.ram");
	memcpy(plan->uuid, uuid, QEMU_ARGV_UUID_LEN + 1);
	plan->action = QEMU_ARGV_REWRITE;
	return check_memfd(c->opts[*ram_at].json, plan, err, errlen);
}

int qemu_argv_inspect(int argc, char *const argv[], struct qemu_argv_plan *plan,
		      char *err, size_t errlen)
{
	struct cmdline c;
	int ram_at, rc;

	memset(plan, 0, sizeof(*plan));
	rc = cmdline_read(argc, argv, &c, err, errlen);
	if (rc)
		return rc;
	rc = decide(&c, plan, &ram_at, err, errlen);
	cmdline_free(&c);
	return rc;
}

void qemu_argv_memfd_name(const char *uuid, char name[QEMU_ARGV_MEMFD_NAME_MAX])
{
	snprintf(name, QEMU_ARGV_MEMFD_NAME_MAX, "%s%.36s:%s", QEMU_ARGV_MEMFD_PREFIX, uuid,
		 QEMU_ARGV_RAM_ID);
}

int qemu_argv_check_qmp_dir(const char *dir, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	char s[SHOWN_MAX + 4];

	if (dir[0] != '/')
		return kvmlu_err(err, errlen, -EINVAL, "QMP directory '%s' is not absolute",
				 shown(dir, s));
	/* QEMU's option syntax: a ',' would end the path. */
	if (strchr(dir, ','))
		return kvmlu_err(err, errlen, -EINVAL, "QMP directory '%s' has a ','",
				 shown(dir, s));
	if (strlen(dir) + 1 + QEMU_ARGV_UUID_LEN + strlen(".qmp") >= sizeof(sa.sun_path))
		return kvmlu_err(err, errlen, -ENAMETOOLONG,
				 "QMP directory '%s' too long for a socket path", shown(dir, s));
	return 0;
}

/* pc.ram as memory-backend-file on the memfd, as one JSON text (malloc'd). */
static char *new_object(json_object *memfd, const struct qemu_argv_plan *plan, int ram_fd)
{
	json_object *o = json_object_new_object(), *v;
	char path[32];
	char *text = NULL;

	if (!o)
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ram_fd);
	if (json_object_object_add(o, "qom-type", json_object_new_string("memory-backend-file")) ||
	    json_object_object_add(o, "id", json_object_new_string(QEMU_ARGV_RAM_ID)) ||
	    json_object_object_add(o, "mem-path", json_object_new_string(path)) ||
	    json_object_object_add(o, "share", json_object_new_boolean(1)) ||
	    json_object_object_add(o, "size", json_object_new_int64((int64_t)plan->ram_size)) ||
	    json_object_object_add(o, "x-use-canonical-path-for-ramblock-id",
				   json_object_new_boolean(0)))
		goto out;
	for (size_t i = 0; i < NR_MEMFD_KEYS; i++)
		if (memfd_keys[i].rule == KEEP &&
		    json_object_object_get_ex(memfd, memfd_keys[i].key, &v) &&
		    json_object_object_add(o, memfd_keys[i].key, json_object_get(v)))
			goto out;
	text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE));
out:
	json_object_put(o);
	return text;
}

void qemu_argv_out_free(struct qemu_argv_out *out)
{
	free(out->argv);
	free(out->object);
	free(out->qmp);
	memset(out, 0, sizeof(*out));
}

int qemu_argv_rewrite(int argc, char *const argv[], const char *qemu, int ram_fd,
		      const char *qmp_dir, struct qemu_argv_out *out, struct qemu_argv_plan *plan,
		      char *err, size_t errlen)
{
	struct cmdline c;
	int ram_at, rc, n = 0;
	size_t qlen;

	memset(out, 0, sizeof(*out));
	if (ram_fd < 0)
		return kvmlu_err(err, errlen, -EINVAL, "no memfd (fd %d)", ram_fd);
	rc = qemu_argv_check_qmp_dir(qmp_dir, err, errlen);
	if (rc)
		return rc;
	rc = cmdline_read(argc, argv, &c, err, errlen);
	if (rc)
		return rc;
	rc = decide(&c, plan, &ram_at, err, errlen);
	if (rc)
		goto out;
	if (plan->action != QEMU_ARGV_REWRITE) {
		rc = kvmlu_err(err, errlen, -EINVAL, "nothing to rewrite: %s", plan->why);
		goto out;
	}
	out->object = new_object(c.opts[ram_at].json, plan, ram_fd);
	qlen = strlen("unix:/") + strlen(qmp_dir) + QEMU_ARGV_UUID_LEN +
	       strlen(".qmp,server=on,wait=off") + 1;
	out->qmp = malloc(qlen);
	/* argv[0] is replaced, -mem-prealloc may go, -qmp and its value come. */
	out->argv = calloc((size_t)argc + 3, sizeof(*out->argv));
	if (!out->object || !out->qmp || !out->argv) {
		rc = kvmlu_err(err, errlen, -ENOMEM, "out of memory");
		goto err_out;
	}
	snprintf(out->qmp, qlen, "unix:%s/%s.qmp,server=on,wait=off", qmp_dir, plan->uuid);
	out->argv[n++] = (char *)qemu;
	/* Every token is an option or its value (cmdline_read saw to that). */
	for (int i = 0; i < c.nr; i++) {
		const struct opt *o = &c.opts[i];

		if (!strcmp(o->name, "mem-prealloc"))
			continue;
		out->argv[n++] = argv[o->at];
		if (o->val)
			out->argv[n++] = i == ram_at ? out->object : argv[o->at + 1];
	}
	out->argv[n++] = (char *)"-qmp";
	out->argv[n++] = out->qmp;
	out->argv[n] = NULL;
	out->argc = n;
	rc = 0;
	goto out;
err_out:
	qemu_argv_out_free(out);
out:
	cmdline_free(&c);
	return rc;
}

void qemu_argv_qmp_wait(struct qemu_argv_out *out)
{
	size_t n = strlen(out->qmp), tail = strlen(",wait=off");

	/* "on" is shorter than "off": the text shrinks in place. */
	if (n >= tail && !strcmp(out->qmp + n - tail, ",wait=off"))
		strcpy(out->qmp + n - tail, ",wait=on");
}

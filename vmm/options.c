// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-vmm command line (see options.h). getopt_long with one option
 * table per subcommand; strict: unknown options, stray arguments, repeated
 * options, bad numbers and missing required options are all errors, so a
 * typo in a unit file never starts a VM that is not what was asked for.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "kvmlu/control_wire.h"
#include "vmm/options.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"

enum {
	OPT_NAME = 'n',
	OPT_MEMORY = 'm',
	OPT_CPUS = 'c',
	OPT_HELP = 'h',
	OPT_PAYLOAD = 256,
	OPT_KERNEL,
	OPT_INITRD,
	OPT_APPEND,
	OPT_BACKEND,
	OPT_SERIAL,
	OPT_CONTROL,
	OPT_SESSION,
	OPT_DISK,
	OPT_VERIFY,
	OPT_NET,
	OPT_CONTROL_IDLE,
	OPT_TRANSPORT,
	OPT_MAX_,
};

static const struct option run_opts[] = {
	{ "name", required_argument, NULL, OPT_NAME },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "payload", required_argument, NULL, OPT_PAYLOAD },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "initrd", required_argument, NULL, OPT_INITRD },
	{ "append", required_argument, NULL, OPT_APPEND },
	{ "memory-backend", required_argument, NULL, OPT_BACKEND },
	{ "serial", required_argument, NULL, OPT_SERIAL },
	{ "control", required_argument, NULL, OPT_CONTROL },
	{ "control-idle-ms", required_argument, NULL, OPT_CONTROL_IDLE },
	{ "disk", required_argument, NULL, OPT_DISK },
	{ "net", required_argument, NULL, OPT_NET },
	{ "virtio-transport", required_argument, NULL, OPT_TRANSPORT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static const struct option restore_opts[] = {
	{ "session", required_argument, NULL, OPT_SESSION },
	{ "verify", required_argument, NULL, OPT_VERIFY },
	{ "serial", required_argument, NULL, OPT_SERIAL },
	{ "control", required_argument, NULL, OPT_CONTROL },
	{ "control-idle-ms", required_argument, NULL, OPT_CONTROL_IDLE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

void vmm_options_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s run --name N --memory SIZE --cpus K (--payload FILE | --kernel BZIMAGE\n"
		"           [--initrd FILE] [--append CMDLINE]) [--memory-backend memfd|guest_memfd]\n"
		"           [--serial FILE] [--control SOCK] [--control-idle-ms MS]\n"
		"           [--disk PATH[,readonly][,id=NAME]]... [--net tap=NAME[,mac=MAC][,bridge=BR][,offloads=on|off]]...\n"
		"       %s restore --session NAME [--serial FILE] [--control SOCK] [--control-idle-ms MS]\n"
		"           [--verify lazy|sync]\n"
		"       %s --help | --version\n"
		"\n"
		"  --name N            VM name: letters, digits, '.', '_', '-' (max %d)\n"
		"  --memory SIZE       guest RAM, e.g. 256M or 2G (a multiple of 2 MiB, at most 1T)\n"
		"  --cpus K            vCPUs, 1..%d\n"
		"  --payload FILE      flat 64-bit payload (include/kvmlu/payload_abi.h)\n"
		"  --kernel BZIMAGE    Linux kernel to boot instead of a payload\n"
		"  --memory-backend B  memfd (default) or guest_memfd\n"
		"  --serial FILE       COM1 output (appended); default stdout\n"
		"  --control SOCK      JSON control socket (mode 0600)\n"
		"  --control-idle-ms MS  a control client without a complete request line for\n"
		"                      MS ms is closed (%d..%d, default %d)\n"
		"  --disk PATH[,readonly][,id=NAME]\n"
		"                      a virtio-blk disk on a raw image or block device, up to %d;\n"
		"                      id (1..%d of [A-Za-z0-9._-]) is what the guest's GET_ID reads\n"
		"  --net tap=NAME[,mac=MAC][,bridge=BR][,offloads=on|off]\n"
		"                      a virtio-net NIC on tap NAME (created if missing, brought up,\n"
		"                      added to bridge BR), up to %d; MAC like 52:54:00:12:34:56,\n"
		"                      or one generated at start and kept across upgrades and kexecs;\n"
		"                      offloads=off offers no checksum or TSO offload\n"
		"  --virtio-transport mmio|pci\n"
		"                      how the guest reaches its disks and NICs: virtio-pci with\n"
		"                      MSI-X (the default) or virtio-mmio\n"
		"  --verify lazy|sync  restore: resume first and verify RAM chunk by chunk on\n"
		"                      first touch (lazy, the default; falls back to sync where\n"
		"                      userfaultfd cannot), or verify all before resuming (sync);\n"
		"                      default from KVMLU_RESTORE_VERIFY\n",
		prog, prog, prog, VM_NAME_MAX, VM_MAX_VCPUS, CONTROL_IDLE_MS_MIN, CONTROL_IDLE_MS_MAX,
		CONTROL_IDLE_MS_DEFAULT, VMM_MAX_DISKS, VIRTIO_BLK_ID_MAX,
		VMM_MAX_NETS);
}

bool vmm_options_name_valid(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > VM_NAME_MAX || !isalnum((unsigned char)name[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

static const char *options_name(const struct option *table, int c)
{
	for (; table->name; table++)
		if (table->val == c)
			return table->name;
	return "?";
}

static int options_parse_cpus(const char *s, unsigned int *out, char *err, size_t errlen)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return kvmlu_err(err, errlen, -EINVAL, "--cpus '%s': not a number", s);
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end)
		return kvmlu_err(err, errlen, -EINVAL, "--cpus '%s': not a number", s);
	if (v < 1 || v > VM_MAX_VCPUS)
		return kvmlu_err(err, errlen, -EINVAL, "--cpus %lu: must be 1..%d", v, VM_MAX_VCPUS);
	*out = (unsigned int)v;
	return 0;
}

static int options_parse_idle(const char *s, unsigned int *out, char *err, size_t errlen)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = isdigit((unsigned char)s[0]) ? strtoul(s, &end, 10) : 0;
	if (!isdigit((unsigned char)s[0]) || errno || *end ||
	    v < CONTROL_IDLE_MS_MIN || v > CONTROL_IDLE_MS_MAX)
		return kvmlu_err(err, errlen, -EINVAL, "--control-idle-ms '%s': must be %d..%d", s,
				 CONTROL_IDLE_MS_MIN, CONTROL_IDLE_MS_MAX);
	*out = (unsigned int)v;
	return 0;
}

static int options_parse_path(const char *opt, const char *s, const char **out,
			      char *err, size_t errlen)
{
	if (!*s)
		return kvmlu_err(err, errlen, -EINVAL, "--%s: empty path", opt);
	*out = s;
	return 0;
}

static bool options_disk_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > VIRTIO_BLK_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)id[i]) && !strchr("._-", id[i]))
			return false;
	return true;
}

/*
 * A new entry of the one list of devices (vmm/device_config.h), of the
 * type of that kind, zeroed and without an fd: filled, then added
 * (options_add_device) in slot order.
 */
static struct vm_device_config *options_new_device(struct vm_device_config *c, const char *kind)
{
	memset(c, 0, sizeof(*c));
	c->type = vm_device_type_find(kind);
	c->fd = -1;
	return c;
}

static int options_add_device(struct vmm_options *o, const struct vm_device_config *c,
			      char *err, size_t errlen)
{
	int rc = vm_device_config_add(o->devs, &o->nr_devs, VMM_MAX_DISKS + VMM_MAX_NETS, c);

	return rc ? kvmlu_err(err, errlen, rc, "internal: add a device: %s", strerror(-rc)) : 0;
}

static unsigned int options_count(const struct vmm_options *o, const char *kind)
{
	return vm_device_config_count(o->devs, o->nr_devs, vm_device_type_find(kind));
}

/* PATH[,readonly][,id=NAME]: a path with a comma cannot be given. */
static int options_parse_disk(const char *arg, struct vmm_options *o, char *err, size_t errlen)
{
	struct vm_device_config c;
	struct virtio_blk_disk_spec *d = vm_device_config_spec(options_new_device(&c, "virtio-blk"));
	const char *p = strchr(arg, ',');
	size_t n = p ? (size_t)(p - arg) : strlen(arg);
	bool ro = false, id = false;

	if (options_count(o, "virtio-blk") >= VMM_MAX_DISKS)
		return kvmlu_err(err, errlen, -EINVAL, "--disk: at most %d disks", VMM_MAX_DISKS);
	if (n == 0)
		return kvmlu_err(err, errlen, -EINVAL, "--disk '%s': empty path", arg);
	if (n >= PATH_MAX)
		return kvmlu_err(err, errlen, -EINVAL, "--disk: path longer than %d bytes", PATH_MAX - 1);
	memcpy(d->ident.path, arg, n);
	d->ident.path[n] = '\0';
	while (p) {
		const char *opt = p + 1, *end = strchr(opt, ',');
		size_t len = end ? (size_t)(end - opt) : strlen(opt);

		if (len == 8 && !strncmp(opt, "readonly", 8) && !ro) {
			d->readonly = ro = true;
		} else if (len > 3 && !strncmp(opt, "id=", 3) && !id) {
			if (len - 3 > VIRTIO_BLK_ID_MAX)
				return kvmlu_err(err, errlen, -EINVAL,
						 "--disk %s: id '%.*s' is longer than %d bytes",
						 d->ident.path, (int)(len - 3), opt + 3,
						 VIRTIO_BLK_ID_MAX);
			memcpy(d->id, opt + 3, len - 3);
			d->id[len - 3] = '\0';
			if (!options_disk_id_valid(d->id))
				return kvmlu_err(err, errlen, -EINVAL,
						 "--disk %s: id '%s': use [A-Za-z0-9._-]", d->ident.path,
						 d->id);
			id = true;
		} else {
			return kvmlu_err(err, errlen, -EINVAL,
					 "--disk %s: unknown or repeated option '%.*s' (readonly, id=NAME)",
					 d->ident.path, (int)len, opt);
		}
		p = end;
	}
	for (unsigned int i = 0; i < o->nr_devs; i++) {
		const struct virtio_blk_disk_spec *e = vm_device_config_spec_c(&o->devs[i]);

		if (o->devs[i].type == c.type && d->id[0] && !strcmp(e->id, d->id))
			return kvmlu_err(err, errlen, -EINVAL, "--disk %s: id '%s' is used twice",
					 d->ident.path, d->id);
	}
	return options_add_device(o, &c, err, errlen);
}

/*
 * tap=NAME[,mac=MAC][,bridge=BR][,offloads=on|off], keys in any order,
 * each once; tap required.
 */
static int options_parse_net(const char *arg, struct vmm_options *o, char *err, size_t errlen)
{
	struct vm_device_config c;
	struct virtio_net_spec *n = vm_device_config_spec(options_new_device(&c, "virtio-net"));
	bool has_tap = false, has_bridge = false, has_offloads = false;
	const char *p = arg;

	if (options_count(o, "virtio-net") >= VMM_MAX_NETS)
		return kvmlu_err(err, errlen, -EINVAL, "--net: at most %d", VMM_MAX_NETS);
	while (*p) {
		size_t len = strcspn(p, ",");
		char val[32];
		const char *eq = memchr(p, '=', len);
		size_t klen = eq ? (size_t)(eq - p) : len;
		size_t vlen = eq ? len - klen - 1 : 0;

		if (!eq || vlen >= sizeof(val))
			return kvmlu_err(err, errlen, -EINVAL,
					 "--net %s: '%.*s': expected tap=NAME, mac=MAC, bridge=BR or offloads=on|off",
					 arg, (int)len, p);
		memcpy(val, eq + 1, vlen);
		val[vlen] = '\0';
		if (klen == 3 && !strncmp(p, "tap", 3) && !has_tap) {
			if (!tap_name_valid(val))
				return kvmlu_err(err, errlen, -EINVAL,
						 "--net %s: tap '%s': use 1..%d of [A-Za-z0-9._-]", arg,
						 val, IFNAMSIZ - 1);
			memcpy(n->tap, val, strlen(val) + 1);	/* valid: < IFNAMSIZ */
			has_tap = true;
		} else if (klen == 3 && !strncmp(p, "mac", 3) && !n->has_mac) {
			if (!virtio_net_mac_parse(val, n->mac))
				return kvmlu_err(err, errlen, -EINVAL,
						 "--net %s: mac '%s': need a unicast MAC like 52:54:00:12:34:56",
						 arg, val);
			n->has_mac = true;
		} else if (klen == 6 && !strncmp(p, "bridge", 6) && !has_bridge) {
			if (!tap_name_valid(val))
				return kvmlu_err(err, errlen, -EINVAL,
						 "--net %s: bridge '%s': use 1..%d of [A-Za-z0-9._-]",
						 arg, val, IFNAMSIZ - 1);
			memcpy(n->bridge, val, strlen(val) + 1);
			has_bridge = true;
		} else if (klen == 8 && !strncmp(p, "offloads", 8) && !has_offloads) {
			if (strcmp(val, "on") && strcmp(val, "off"))
				return kvmlu_err(err, errlen, -EINVAL,
						 "--net %s: offloads '%s': on or off", arg, val);
			n->no_offloads = !strcmp(val, "off");
			has_offloads = true;
		} else {
			return kvmlu_err(err, errlen, -EINVAL,
					 "--net %s: unknown or repeated option '%.*s' (tap=NAME, mac=MAC, bridge=BR, offloads=on|off)",
					 arg, (int)klen, p);
		}
		p += len;
		if (*p == ',' && *++p == '\0')
			return kvmlu_err(err, errlen, -EINVAL, "--net %s: trailing ','", arg);
	}
	if (!has_tap)
		return kvmlu_err(err, errlen, -EINVAL, "--net '%s': tap=NAME is required", arg);
	for (unsigned int i = 0; i < o->nr_devs; i++) {
		const struct virtio_net_spec *e = vm_device_config_spec_c(&o->devs[i]);

		if (o->devs[i].type != c.type)
			continue;
		if (!strcmp(e->tap, n->tap))
			return kvmlu_err(err, errlen, -EINVAL, "--net: tap '%s' is used twice", n->tap);
		if (n->has_mac && e->has_mac && !memcmp(e->mac, n->mac, 6))
			return kvmlu_err(err, errlen, -EINVAL, "--net %s: the MAC is used twice", arg);
	}
	return options_add_device(o, &c, err, errlen);
}

static int options_take(int c, const char *arg, struct vmm_options *o,
			char *err, size_t errlen)
{
	int rc;

	switch (c) {
	case OPT_NAME:
		if (!vmm_options_name_valid(arg))
			return kvmlu_err(err, errlen, -EINVAL,
				       "--name '%s': use 1..%d of [A-Za-z0-9._-], starting with a letter or digit",
				       arg, VM_NAME_MAX);
		o->name = arg;
		return 0;
	case OPT_MEMORY:
		rc = guestmem_parse_size(arg, &o->memory);
		if (rc == -ERANGE || (!rc && o->memory > GUESTMEM_MAX_RAM))
			return kvmlu_err(err, errlen, -EINVAL,
				       "--memory '%s': too large: at most %lluT of guest RAM",
				       arg, (unsigned long long)(GUESTMEM_MAX_RAM >> 40));
		if (rc || o->memory == 0)
			return kvmlu_err(err, errlen, -EINVAL,
				       "--memory '%s': need a size like 256M or 2G, a multiple of 2 MiB",
				       arg);
		return 0;
	case OPT_CPUS:
		return options_parse_cpus(arg, &o->cpus, err, errlen);
	case OPT_PAYLOAD:
		return options_parse_path("payload", arg, &o->payload, err, errlen);
	case OPT_KERNEL:
		return options_parse_path("kernel", arg, &o->kernel, err, errlen);
	case OPT_INITRD:
		return options_parse_path("initrd", arg, &o->initrd, err, errlen);
	case OPT_APPEND:
		o->append = arg;
		return 0;
	case OPT_BACKEND:
		if (guestmem_backend_parse(arg, &o->backend))
			return kvmlu_err(err, errlen, -EINVAL,
				       "--memory-backend '%s': must be memfd or guest_memfd", arg);
		return 0;
	case OPT_SERIAL:
		return options_parse_path("serial", arg, &o->serial, err, errlen);
	case OPT_CONTROL:
		return options_parse_path("control", arg, &o->control, err, errlen);
	case OPT_CONTROL_IDLE:
		return options_parse_idle(arg, &o->control_idle_ms, err, errlen);
	case OPT_DISK:
		return options_parse_disk(arg, o, err, errlen);
	case OPT_VERIFY:
		if (strcmp(arg, "lazy") && strcmp(arg, "sync"))
			return kvmlu_err(err, errlen, -EINVAL, "--verify '%s': lazy or sync", arg);
		o->verify = arg;
		return 0;
	case OPT_NET:
		return options_parse_net(arg, o, err, errlen);
	case OPT_TRANSPORT:
		if (!strcmp(arg, "mmio"))
			o->transport = VM_VIRTIO_TRANSPORT_MMIO;
		else if (!strcmp(arg, "pci"))
			o->transport = VM_VIRTIO_TRANSPORT_PCI;
		else
			return kvmlu_err(err, errlen, -EINVAL,
					 "--virtio-transport '%s': mmio or pci", arg);
		return 0;
	case OPT_SESSION:
		if (!*arg || strlen(arg) >= 64)
			return kvmlu_err(err, errlen, -EINVAL,
				       "--session '%s': must be 1..63 characters", arg);
		o->session = arg;
		return 0;
	}
	return kvmlu_err(err, errlen, -EINVAL, "internal: option %d", c);
}

static int options_check_run(struct vmm_options *o, char *err, size_t errlen)
{
	if (!o->name)
		return kvmlu_err(err, errlen, -EINVAL, "run: --name is required");
	if (!o->memory)
		return kvmlu_err(err, errlen, -EINVAL, "run: --memory is required");
	if (!o->cpus)
		return kvmlu_err(err, errlen, -EINVAL, "run: --cpus is required");
	if (!o->payload == !o->kernel)
		return kvmlu_err(err, errlen, -EINVAL,
			       "run: give exactly one of --payload and --kernel");
	if (o->payload && (o->initrd || o->append))
		return kvmlu_err(err, errlen, -EINVAL,
			       "run: --initrd and --append go with --kernel, not --payload");
	if (o->nr_devs > VM_VIRTIO_MAX_DEVICES)
		return kvmlu_err(err, errlen, -EINVAL,
				 "run: %u disks and %u nets: at most %u virtio devices in all",
				 options_count(o, "virtio-blk"), options_count(o, "virtio-net"),
				 VM_VIRTIO_MAX_DEVICES);
	return 0;
}

int vmm_options_parse(int argc, char **argv, struct vmm_options *o,
		      char *err, size_t errlen)
{
	const struct option *table;
	bool seen[OPT_MAX_] = { false };
	const char *sub;
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->backend = GUESTMEM_MEMFD;
	/* The faster of the two (docs/devices.md); a VM keeps its transport for life. */
	o->transport = VM_VIRTIO_TRANSPORT_PCI;
	if (argc < 2)
		return kvmlu_err(err, errlen, -EINVAL, "missing command: run or restore (see --help)");
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		if (argc > 2)
			return kvmlu_err(err, errlen, -EINVAL, "--help takes no arguments");
		o->help = true;
		return 0;
	}
	if (!strcmp(sub, "--version")) {
		if (argc > 2)
			return kvmlu_err(err, errlen, -EINVAL, "--version takes no arguments");
		o->version = true;
		return 0;
	}
	if (!strcmp(sub, "run")) {
		o->cmd = VMM_CMD_RUN;
		table = run_opts;
	} else if (!strcmp(sub, "restore")) {
		o->cmd = VMM_CMD_RESTORE;
		table = restore_opts;
	} else {
		return kvmlu_err(err, errlen, -EINVAL, "unknown command '%s': use run or restore", sub);
	}

	/* getopt keeps global state; reset it so parsing can run more than once. */
	optind = 2;
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, "+:h", table, NULL);
		if (c == -1)
			break;
		if (c == ':')
			return kvmlu_err(err, errlen, -EINVAL, "%s: option '%s' needs a value",
				       sub, argv[optind - 1]);
		if (c == '?') {
			if (optopt)
				return kvmlu_err(err, errlen, -EINVAL, "%s: unknown option '-%c'",
					       sub, optopt);
			return kvmlu_err(err, errlen, -EINVAL, "%s: unknown option '%s'",
				       sub, argv[optind - 1]);
		}
		if (c == OPT_HELP) {
			o->help = true;
			continue;
		}
		if (c < 0 || c >= OPT_MAX_)
			return kvmlu_err(err, errlen, -EINVAL, "%s: unexpected option", sub);
		if (seen[c] && c != OPT_DISK && c != OPT_NET)
			return kvmlu_err(err, errlen, -EINVAL, "%s: option '--%s' given twice", sub,
				       options_name(table, c));
		seen[c] = true;
		rc = options_take(c, optarg, o, err, errlen);
		if (rc)
			return rc;
	}
	if (optind < argc)
		return kvmlu_err(err, errlen, -EINVAL, "%s: unexpected argument '%s'", sub, argv[optind]);
	if (o->help)
		return 0;
	if (o->cmd == VMM_CMD_RUN)
		return options_check_run(o, err, errlen);
	if (!o->session)
		return kvmlu_err(err, errlen, -EINVAL, "restore: --session is required");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Parse an untrusted state FDT (docs/state-format.md) into a struct
 * state_vm. The blob may come from another process, a file or the
 * previous kernel, so it is treated as hostile: libfdt's full structure
 * check first, then every node and property is looked up by name, its
 * size checked exactly and its count bounded before anything is copied.
 * Each refusal names the node, the property and the value that is wrong.
 * Unknown properties and nodes are ignored (minor versions may add
 * optional ones); an unknown major version or node compatible is refused.
 * A device's node is read by its type (struct vm_device_type's decode,
 * vmm/device.h), found by its compatible: this file names no device.
 *
 * Nothing here touches KVM. On error the partially filled state is freed.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_validate.h"
#include "vmm/state_node.h"
#include "vmm/vm_virtio.h"

/* Bail out on the first refusal. */
#define TRY(x) do { int r_ = (x); if (r_) return r_; } while (0)

static bool name_is(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

static int hex_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	for (int i = 0; i < 16; i++) {
		char c = s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else
			return -EINVAL;
		v = (v << 4) | d;
	}
	*out = v;
	return 0;
}

static int read_region(const struct state_node *n, struct state_vm_region *r)
{
	uint64_t reg[2];

	if (fdt_node_check_compatible(n->fdt, n->node, STATE_FDT_COMPAT_REGION))
		return state_node_err(n, "not a \"%s\"", STATE_FDT_COMPAT_REGION);
	TRY(state_node_u64_array(n, "reg", reg, 2));
	r->gpa = reg[0];
	r->size = reg[1];
	TRY(state_node_u64(n, "file-offset", false, &r->file_offset));
	TRY(state_node_u64(n, "token", false, &r->token));
	return state_node_u32(n, "slot", false, &r->slot);
}

/* Optional (format 1.1): 16 bytes a chunk; the count is checked in state_validate.c. */
static int read_chunk_digests(const struct state_node *mem, struct state_vm *s)
{
	const char *v;
	int len = 0, ret;

	ret = state_node_prop(mem, "chunk-digests", -1, true, (const void **)&v, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	if (len == 0 || len % 16 || (uint64_t)len / 16 > STATE_MAX_CHUNK_DIGESTS)
		return state_node_err(mem, "property \"chunk-digests\" is %d bytes, not 16 per chunk for 1..%u chunks",
				      len, STATE_MAX_CHUNK_DIGESTS);
	s->chunk_digests = calloc((size_t)len / 16, sizeof(*s->chunk_digests));
	if (!s->chunk_digests)
		return state_node_err(mem, "no memory for %d chunk digests", len / 16);
	s->nr_chunk_digests = (uint64_t)len / 16;
	for (uint64_t i = 0; i < s->nr_chunk_digests; i++) {
		fdt64_t hi, lo;

		memcpy(&hi, v + 16 * i, 8);
		memcpy(&lo, v + 16 * i + 8, 8);
		s->chunk_digests[i].hi = fdt64_to_cpu(hi);
		s->chunk_digests[i].lo = fdt64_to_cpu(lo);
	}
	return 0;
}

static int read_memory(const struct state_node *root, struct state_vm *s)
{
	char backend[16], sum[33];
	struct state_node mem;
	int node, ret;

	TRY(state_node_child(root, "memory", STATE_FDT_COMPAT_MEMORY, false, &mem));
	TRY(state_node_str(&mem, "backend", false, backend, sizeof(backend) - 1));
	if (!strcmp(backend, "memfd"))
		s->backend = STATE_BACKEND_MEMFD;
	else if (!strcmp(backend, "guest_memfd"))
		s->backend = STATE_BACKEND_GUEST_MEMFD;
	else
		return state_node_err(&mem, "unknown backend \"%s\"", backend);
	ret = state_node_str(&mem, "checksum", true, sum, sizeof(sum) - 1);
	if (ret == 0) {
		if (strlen(sum) != 32 || hex_u64(sum, &s->checksum_hi) ||
		    hex_u64(sum + 16, &s->checksum_lo))
			return state_node_err(&mem, "checksum \"%s\" is not 32 lowercase hex digits",
					      sum);
		s->has_checksum = true;
	} else if (ret != -ENOENT) {
		return ret;
	}
	TRY(read_chunk_digests(&mem, s));
	fdt_for_each_subnode(node, mem.fdt, mem.node) {
		const char *name = fdt_get_name(mem.fdt, node, NULL);
		struct state_node r = state_node_at(&mem, node);

		if (!name || !name_is(name, "region@"))
			continue;
		if (s->nr_regions == STATE_MAX_REGIONS)
			return state_node_err(&mem, "more than %d memory regions", STATE_MAX_REGIONS);
		TRY(read_region(&r, &s->regions[s->nr_regions]));
		s->nr_regions++;
	}
	if (node < 0 && node != -FDT_ERR_NOTFOUND)
		return state_node_err(&mem, "bad subnodes (%s)", fdt_strerror(node));
	if (s->nr_regions == 0)
		return state_node_err(&mem, "no memory regions");
	return 0;
}

static int read_cpuid(const struct state_node *n, struct cpu_state *c)
{
	const void *v = NULL;
	const fdt32_t *cells;
	int len = 0;

	TRY(state_node_prop(n, "cpuid", -1, false, &v, &len));
	cells = v;
	if (len % 28)
		return state_node_err(n, "property \"cpuid\" is %d bytes, not a multiple of 28", len);
	if (len / 28 > CPU_STATE_MAX_CPUID)
		return state_node_err(n, "%d CPUID entries, at most %d", len / 28,
				      CPU_STATE_MAX_CPUID);
	c->nr_cpuid = (uint32_t)len / 28;
	for (uint32_t i = 0; i < c->nr_cpuid; i++) {
		struct kvm_cpuid_entry2 *e = &c->cpuid[i];

		memset(e, 0, sizeof(*e));
		e->function = fdt32_ld(&cells[i * 7 + 0]);
		e->index = fdt32_ld(&cells[i * 7 + 1]);
		e->flags = fdt32_ld(&cells[i * 7 + 2]);
		e->eax = fdt32_ld(&cells[i * 7 + 3]);
		e->ebx = fdt32_ld(&cells[i * 7 + 4]);
		e->ecx = fdt32_ld(&cells[i * 7 + 5]);
		e->edx = fdt32_ld(&cells[i * 7 + 6]);
	}
	return 0;
}

static int read_msrs(const struct state_node *n, struct cpu_state *c)
{
	const void *v = NULL;
	const fdt32_t *cells;
	int len = 0;

	TRY(state_node_prop(n, "msrs", -1, false, &v, &len));
	cells = v;
	if (len % 12)
		return state_node_err(n, "property \"msrs\" is %d bytes, not a multiple of 12", len);
	if (len / 12 > CPU_STATE_MAX_MSRS)
		return state_node_err(n, "%d MSRs, at most %d", len / 12, CPU_STATE_MAX_MSRS);
	c->nr_msrs = (uint32_t)len / 12;
	for (uint32_t i = 0; i < c->nr_msrs; i++) {
		c->msrs[i].index = fdt32_ld(&cells[i * 3]);
		c->msrs[i].value = ((uint64_t)fdt32_ld(&cells[i * 3 + 1]) << 32) |
				   fdt32_ld(&cells[i * 3 + 2]);
	}
	return 0;
}

/* Optional blob: sets have on success, absent is fine. */
static int read_optional(const struct state_node *n, const char *name, void *out, int size,
			 uint32_t *have, uint32_t bit)
{
	int ret = state_node_blob(n, name, true, out, size);

	if (ret == 0)
		*have |= bit;
	return ret == -ENOENT ? 0 : ret;
}

static int read_cpu(const struct state_node *n, struct cpu_state *c)
{
	uint64_t regs[sizeof(c->regs) / sizeof(uint64_t)], dr[6];
	const void *v = NULL;
	int len = 0, ret;

	TRY(state_node_u64_array(n, "regs", regs, (int)(sizeof(regs) / sizeof(regs[0]))));
	memcpy(&c->regs, regs, sizeof(regs));
	TRY(state_node_blob(n, "sregs2", false, &c->sregs2, sizeof(c->sregs2)));
	TRY(state_node_prop(n, "xsave", -1, false, &v, &len));
	if (len < CPU_STATE_XSAVE_MIN || len > CPU_STATE_XSAVE_MAX)
		return state_node_err(n, "property \"xsave\" is %d bytes, not %d..%d",
				      len, CPU_STATE_XSAVE_MIN, CPU_STATE_XSAVE_MAX);
	memcpy(c->xsave, v, (size_t)len);
	c->xsave_size = (uint32_t)len;
	TRY(state_node_blob(n, "xcrs", false, &c->xcrs, sizeof(c->xcrs)));
	TRY(read_optional(n, "lapic", &c->lapic, sizeof(c->lapic), &c->have,
			  CPU_STATE_HAVE_LAPIC));
	TRY(state_node_blob(n, "vcpu-events", false, &c->events, sizeof(c->events)));
	TRY(state_node_u32(n, "mp-state", false, &c->mp_state.mp_state));
	TRY(state_node_u64_array(n, "debugregs", dr, 6));
	memcpy(c->debugregs.db, dr, sizeof(c->debugregs.db));
	c->debugregs.dr6 = dr[4];
	c->debugregs.dr7 = dr[5];
	TRY(read_cpuid(n, c));
	TRY(read_msrs(n, c));
	TRY(state_node_u32(n, "tsc-khz", false, &c->tsc_khz));
	ret = state_node_u64(n, "tsc-offset", true, &c->tsc_offset);
	if (ret == 0)
		c->have |= CPU_STATE_HAVE_TSC_OFFSET;
	return ret == -ENOENT ? 0 : ret;
}

static int read_cpus(const struct state_node *root, struct state_vm *s)
{
	uint8_t seen[STATE_MAX_VCPUS] = { 0 };
	struct state_node cpus;
	uint32_t nr, found = 0;
	int node;

	TRY(state_node_child(root, "cpus", STATE_FDT_COMPAT_CPUS, false, &cpus));
	TRY(state_node_u32(&cpus, "nr-vcpus", false, &nr));
	if (nr == 0 || nr > STATE_MAX_VCPUS)
		return state_node_err(&cpus, "nr-vcpus %u out of range 1..%d", nr, STATE_MAX_VCPUS);
	s->cpus = calloc(nr, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	s->nr_vcpus = nr;
	fdt_for_each_subnode(node, cpus.fdt, cpus.node) {
		const char *name = fdt_get_name(cpus.fdt, node, NULL);
		struct state_node c = state_node_at(&cpus, node);
		uint32_t idx;

		if (!name || !name_is(name, "cpu@"))
			continue;
		if (fdt_node_check_compatible(c.fdt, node, STATE_FDT_COMPAT_CPU))
			return state_node_err(&c, "not a \"%s\"", STATE_FDT_COMPAT_CPU);
		TRY(state_node_u32(&c, "reg", false, &idx));
		if (idx >= nr)
			return state_node_err(&c, "vCPU index %u out of range (nr-vcpus %u)", idx, nr);
		if (seen[idx])
			return state_node_err(&c, "vCPU index %u appears twice", idx);
		seen[idx] = 1;
		s->cpus[idx].index = idx;
		TRY(read_cpu(&c, &s->cpus[idx]));
		found++;
	}
	if (node < 0 && node != -FDT_ERR_NOTFOUND)
		return state_node_err(&cpus, "bad subnodes (%s)", fdt_strerror(node));
	if (found != nr)
		return state_node_err(&cpus, "vCPU count mismatch: nr-vcpus %u but %u cpu nodes",
				      nr, found);
	return 0;
}

static int read_uart(const struct state_node *n, struct uart8250_state *u)
{
	static const char *const names[] = { "ier", "iir", "fcr", "lcr", "mcr",
					     "lsr", "msr", "scr", "dll", "dlm" };
	uint8_t *fields[] = { &u->ier, &u->iir, &u->fcr, &u->lcr, &u->mcr,
			      &u->lsr, &u->msr, &u->scr, &u->dll, &u->dlm };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint32_t v;

		TRY(state_node_u32(n, names[i], false, &v));
		if (v > 0xff)
			return state_node_err(n, "register %s = 0x%x is not a byte", names[i], v);
		*fields[i] = (uint8_t)v;
	}
	return 0;
}

/*
 * A device node of type t: where it sits (reg, slot, gsi), every type
 * alike, then the type's own properties (its decode), into a new entry
 * of s's list (after the devices of its type and the types before it,
 * whatever the node order).
 */
static int read_device(const struct state_node *n, const struct vm_device_type *t,
		       struct state_vm *s)
{
	const void *v = NULL;
	void *st;

	if (state_vm_count(s, t) >= t->max)
		return state_node_err(n, "more than %u %s devices", t->max, t->kind);
	st = state_vm_add_device(s, t);
	if (!st)
		return state_node_err(n, "more than %u virtio devices", STATE_MAX_DEVICES);
	TRY(state_node_prop(n, "reg", 8, false, &v, NULL));
	*vm_device_state_base(t, st) = fdt32_ld(v);
	if (fdt32_ld((const fdt32_t *)v + 1) != VM_VIRTIO_MMIO_SIZE)
		return state_node_err(n, "reg size 0x%x, expected 0x%x",
				      fdt32_ld((const fdt32_t *)v + 1), VM_VIRTIO_MMIO_SIZE);
	TRY(state_node_u32(n, "slot", false, vm_device_state_slot(t, st)));
	TRY(state_node_u32(n, "gsi", false, vm_device_state_gsi(t, st)));
	return t->decode(n, st);
}

/*
 * Every device under /devices (a node with a compatible) must be one this
 * reader knows: a state naming a device we would silently drop is
 * refused. A node without a compatible is not a device; a newer minor
 * may add such optional data and it is ignored like unknown properties.
 */
static int read_device_nodes(const struct state_node *dev, struct state_vm *s)
{
	static const char *const known[] = {
		STATE_FDT_COMPAT_IRQCHIP, STATE_FDT_COMPAT_PIT, STATE_FDT_COMPAT_KVMCLOCK,
		STATE_FDT_COMPAT_UART,
	};
	int node;

	fdt_for_each_subnode(node, dev->fdt, dev->node) {
		const char *c = fdt_getprop(dev->fdt, node, "compatible", NULL);
		struct state_node n = state_node_at(dev, node);
		bool ok = false;

		for (unsigned int k = 0; !ok && vm_device_types[k]; k++) {
			if (fdt_node_check_compatible(dev->fdt, node, vm_device_types[k]->compat))
				continue;
			TRY(read_device(&n, vm_device_types[k], s));
			ok = true;
		}
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok = ok || !fdt_node_check_compatible(dev->fdt, node, known[i]);
		if (!ok && c)
			return state_node_err(&n, "device compatible \"%.64s\" not understood", c);
	}
	if (node < 0 && node != -FDT_ERR_NOTFOUND)
		return state_node_err(dev, "bad subnodes (%s)", fdt_strerror(node));
	return 0;
}

/* Optional node `name`: 1 if it is there (in *n), 0 if not. */
static int optional_node(const struct state_node *dev, const char *name, const char *compat,
			 struct state_node *n)
{
	int ret = state_node_child(dev, name, compat, true, n);

	return ret == -ENOENT ? 0 : ret ? ret : 1;
}

static int read_devices(const struct state_node *root, struct state_vm *s)
{
	struct vm_devices_state *d = &s->devices;
	struct state_node dev, n;
	int ret;

	TRY(state_node_child(root, "devices", STATE_FDT_COMPAT_DEVICES, false, &dev));
	{
		char tr[8];

		ret = state_node_str(&dev, "virtio-transport", true, tr, sizeof(tr) - 1);
		if (ret == 0 && !strcmp(tr, "pci"))
			s->virtio_transport = STATE_VIRTIO_TRANSPORT_PCI;
		else if (ret == 0 && strcmp(tr, "mmio"))
			return state_node_err(&dev, "virtio-transport \"%s\": mmio or pci", tr);
		else if (ret && ret != -ENOENT)
			return ret;
	}
	ret = optional_node(&dev, "irqchip", STATE_FDT_COMPAT_IRQCHIP, &n);
	if (ret > 0) {
		TRY(state_node_blob(&n, "pic-master", false, &d->pic_master,
				    sizeof(d->pic_master)));
		TRY(state_node_blob(&n, "pic-slave", false, &d->pic_slave, sizeof(d->pic_slave)));
		TRY(state_node_blob(&n, "ioapic", false, &d->ioapic, sizeof(d->ioapic)));
		d->have |= VM_DEVICES_HAVE_IRQCHIP;
	} else if (ret < 0) {
		return ret;
	}
	ret = optional_node(&dev, "pit", STATE_FDT_COMPAT_PIT, &n);
	if (ret > 0) {
		TRY(state_node_blob(&n, "state", false, &d->pit, sizeof(d->pit)));
		d->have |= VM_DEVICES_HAVE_PIT;
	} else if (ret < 0) {
		return ret;
	}
	ret = optional_node(&dev, "kvmclock", STATE_FDT_COMPAT_KVMCLOCK, &n);
	if (ret > 0) {
		uint64_t clock, realtime, host_tsc;

		TRY(state_node_u64(&n, "clock", false, &clock));
		TRY(state_node_u32(&n, "flags", false, &d->clock.flags));
		TRY(state_node_u64(&n, "realtime", false, &realtime));
		TRY(state_node_u64(&n, "host-tsc", false, &host_tsc));
		TRY(state_node_u64(&n, "wall-ns", false, &d->clock_wall_ns));
		d->clock.clock = clock;
		d->clock.realtime = realtime;
		d->clock.host_tsc = host_tsc;
		d->have |= VM_DEVICES_HAVE_CLOCK;
	} else if (ret < 0) {
		return ret;
	}
	ret = optional_node(&dev, "uart@3f8", STATE_FDT_COMPAT_UART, &n);
	if (ret > 0) {
		TRY(read_uart(&n, &s->uart));
		s->has_uart = true;
	} else if (ret < 0) {
		return ret;
	}
	return read_device_nodes(&dev, s);
}

static int read_root(const struct state_node *root, struct state_vm *s)
{
	const char *compat;
	const void *v = NULL;

	/* The version first: a newer major may have changed everything else. */
	TRY(state_node_prop(root, "kvmlu,format", 8, false, &v, NULL));
	s->format_major = fdt32_ld(v);
	s->format_minor = fdt32_ld((const fdt32_t *)v + 1);
	if (s->format_major < STATE_FORMAT_MAJOR || s->format_major > STATE_FORMAT_MAJOR_MAX)
		return kvmlu_err(root->err, root->errlen, -EPROTONOSUPPORT,
				 "state FDT format %u.%u not understood: this kvmlu reads %d.x and %d.x",
				 s->format_major, s->format_minor, STATE_FORMAT_MAJOR,
				 STATE_FORMAT_MAJOR_MAX);
	compat = s->format_major == STATE_FORMAT_MAJOR ? STATE_FDT_COMPAT_ROOT
						       : STATE_FDT_COMPAT_ROOT_V2;
	if (fdt_node_check_compatible(root->fdt, 0, compat))
		return state_node_err(root, "root is not \"%s\"", compat);
	TRY(state_node_str(root, "kvmlu,version", false, s->kvmlu_version, STATE_VERSION_MAX));
	TRY(state_node_str(root, "vm-name", false, s->name, STATE_NAME_MAX));
	return state_node_str(root, "uuid", false, s->uuid, STATE_UUID_LEN);
}

int state_fdt_read(const void *blob, size_t size, struct state_vm *s,
		   char *err, size_t errlen)
{
	struct state_node root = { .fdt = blob, .node = 0, .err = err, .errlen = errlen };
	int r, ret;

	memset(s, 0, sizeof(*s));
	if (size < sizeof(struct fdt_header))
		return kvmlu_err(err, errlen, -EINVAL,
				    "state FDT truncated: %zu bytes, less than a header", size);
	if (size > STATE_FDT_MAX_SIZE)
		return kvmlu_err(err, errlen, -EFBIG, "state FDT is %zu bytes, at most %u",
				    size, STATE_FDT_MAX_SIZE);
	if (fdt_magic(blob) != FDT_MAGIC)
		return kvmlu_err(err, errlen, -EINVAL, "not an FDT (magic 0x%08x)",
				    fdt_magic(blob));
	if (fdt_totalsize(blob) > size)
		return kvmlu_err(err, errlen, -EINVAL,
				    "state FDT truncated: header says %u bytes, have %zu",
				    fdt_totalsize(blob), size);
	r = fdt_check_full(blob, size);
	if (r)
		return kvmlu_err(err, errlen, -EINVAL, "state FDT corrupted: %s",
				    fdt_strerror(r));
	ret = read_root(&root, s);
	if (!ret)
		ret = read_memory(&root, s);
	if (!ret)
		ret = read_cpus(&root, s);
	if (!ret)
		ret = read_devices(&root, s);
	if (ret)
		state_vm_free(s);
	return ret;
}

int state_fdt_load(const void *blob, size_t size, uint32_t expect_vcpus,
		   struct state_vm *s, char *err, size_t errlen)
{
	int ret = state_fdt_read(blob, size, s, err, errlen);

	if (ret)
		return ret;
	ret = state_validate(s, expect_vcpus, err, errlen);
	if (ret) {
		state_vm_free(s);
		memset(s, 0, sizeof(*s));
	}
	return ret;
}

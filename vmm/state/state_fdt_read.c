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
 *
 * Nothing here touches KVM. On error the partially filled state is freed.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_validate.h"
#include "vmm/vm_virtio.h"

struct reader {
	const void *fdt;
	char *err;
	size_t errlen;
};

static const char *path_of(const struct reader *rd, int node, char *buf, int len)
{
	if (fdt_get_path(rd->fdt, node, buf, len) < 0)
		snprintf(buf, (size_t)len, "(node at %d)", node);
	return buf;
}

/* Refuse with "state FDT <node path>: <what>"; returns -EINVAL. */
static int rd_err(const struct reader *rd, int node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int rd_err(const struct reader *rd, int node, const char *fmt, ...)
{
	char path[256], what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return kvmlu_err(rd->err, rd->errlen, -EINVAL, "state FDT %s: %s",
			    path_of(rd, node, path, sizeof(path)), what);
}

/*
 * Property `name` of node: exactly want bytes (want < 0: any length).
 * Missing: -ENOENT without an error message if optional, else refused.
 */
static int get_prop(const struct reader *rd, int node, const char *name,
		    int want, bool optional, const void **val, int *len)
{
	int l;
	const void *v = fdt_getprop(rd->fdt, node, name, &l);

	if (!v) {
		if (l == -FDT_ERR_NOTFOUND && optional)
			return -ENOENT;
		return rd_err(rd, node, "missing property \"%s\" (%s)", name, fdt_strerror(l));
	}
	if (want >= 0 && l != want)
		return rd_err(rd, node, "property \"%s\" is %d bytes, expected %d",
			      name, l, want);
	*val = v;
	if (len)
		*len = l;
	return 0;
}

static int get_u32(const struct reader *rd, int node, const char *name,
		   bool optional, uint32_t *out)
{
	const void *v = NULL;
	int ret = get_prop(rd, node, name, 4, optional, &v, NULL);

	if (ret)
		return ret;
	*out = fdt32_ld(v);
	return 0;
}

static int get_u64(const struct reader *rd, int node, const char *name,
		   bool optional, uint64_t *out)
{
	const void *v = NULL;
	int ret = get_prop(rd, node, name, 8, optional, &v, NULL);

	if (ret)
		return ret;
	*out = ((uint64_t)fdt32_ld(v) << 32) | fdt32_ld((const fdt32_t *)v + 1);
	return 0;
}

/* A NUL-terminated string without embedded NULs, at most max chars. */
static int get_str(const struct reader *rd, int node, const char *name,
		   bool optional, char *out, size_t max)
{
	const void *v = NULL;
	int len = 0, ret = get_prop(rd, node, name, -1, optional, &v, &len);

	if (ret)
		return ret;
	if (len < 1 || ((const char *)v)[len - 1] != '\0' ||
	    strlen(v) != (size_t)len - 1)
		return rd_err(rd, node, "property \"%s\" is not a single string", name);
	if ((size_t)len - 1 > max)
		return rd_err(rd, node, "property \"%s\" is %d chars, at most %zu",
			      name, len - 1, max);
	memcpy(out, v, (size_t)len);
	return 0;
}

static int get_blob(const struct reader *rd, int node, const char *name,
		    bool optional, void *out, int size)
{
	const void *v = NULL;
	int ret = get_prop(rd, node, name, size, optional, &v, NULL);

	if (ret)
		return ret;
	memcpy(out, v, (size_t)size);
	return 0;
}

/* Child `name` of parent with compatible `compat`; optional: -ENOENT. */
static int get_node(const struct reader *rd, int parent, const char *name,
		    const char *compat, bool optional, int *out)
{
	int node = fdt_subnode_offset(rd->fdt, parent, name);
	int r;

	if (node < 0) {
		if (node == -FDT_ERR_NOTFOUND && optional)
			return -ENOENT;
		return rd_err(rd, parent, "missing node \"%s\" (%s)", name, fdt_strerror(node));
	}
	r = fdt_node_check_compatible(rd->fdt, node, compat);
	if (r) {
		const char *c = fdt_getprop(rd->fdt, node, "compatible", NULL);

		if (r < 0 || !c)
			return rd_err(rd, node, "no compatible (want \"%s\")", compat);
		return rd_err(rd, node, "compatible \"%.64s\" not understood (want \"%s\")",
			      c, compat);
	}
	*out = node;
	return 0;
}

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

static int read_u64_array(const struct reader *rd, int node, const char *name,
			  uint64_t *out, int n)
{
	const void *v = NULL;
	int ret = get_prop(rd, node, name, n * 8, false, &v, NULL);

	if (ret)
		return ret;
	for (int i = 0; i < n; i++)
		out[i] = ((uint64_t)fdt32_ld((const fdt32_t *)v + 2 * i) << 32) |
			 fdt32_ld((const fdt32_t *)v + 2 * i + 1);
	return 0;
}

static int read_region(const struct reader *rd, int node, struct state_vm_region *r)
{
	uint64_t reg[2];
	int ret;

	if (fdt_node_check_compatible(rd->fdt, node, STATE_FDT_COMPAT_REGION))
		return rd_err(rd, node, "not a \"%s\"", STATE_FDT_COMPAT_REGION);
	ret = read_u64_array(rd, node, "reg", reg, 2);
	if (ret)
		return ret;
	r->gpa = reg[0];
	r->size = reg[1];
	ret = get_u64(rd, node, "file-offset", false, &r->file_offset);
	if (!ret)
		ret = get_u64(rd, node, "token", false, &r->token);
	if (!ret)
		ret = get_u32(rd, node, "slot", false, &r->slot);
	return ret;
}

/* Optional (format 1.1): 16 bytes a chunk; the count is checked in state_validate.c. */
static int read_chunk_digests(const struct reader *rd, int mem, struct state_vm *s)
{
	const char *v;
	int len = 0, ret;

	ret = get_prop(rd, mem, "chunk-digests", -1, true, (const void **)&v, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	if (len == 0 || len % 16 || (uint64_t)len / 16 > STATE_MAX_CHUNK_DIGESTS)
		return rd_err(rd, mem, "property \"chunk-digests\" is %d bytes, not 16 per chunk for 1..%u chunks",
			      len, STATE_MAX_CHUNK_DIGESTS);
	s->chunk_digests = calloc((size_t)len / 16, sizeof(*s->chunk_digests));
	if (!s->chunk_digests)
		return rd_err(rd, mem, "no memory for %d chunk digests", len / 16);
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

static int read_memory(const struct reader *rd, struct state_vm *s)
{
	char backend[16], sum[33];
	int mem, node, ret;

	ret = get_node(rd, 0, "memory", STATE_FDT_COMPAT_MEMORY, false, &mem);
	if (ret)
		return ret;
	ret = get_str(rd, mem, "backend", false, backend, sizeof(backend) - 1);
	if (ret)
		return ret;
	if (!strcmp(backend, "memfd"))
		s->backend = STATE_BACKEND_MEMFD;
	else if (!strcmp(backend, "guest_memfd"))
		s->backend = STATE_BACKEND_GUEST_MEMFD;
	else
		return rd_err(rd, mem, "unknown backend \"%s\"", backend);
	ret = get_str(rd, mem, "checksum", true, sum, sizeof(sum) - 1);
	if (ret == 0) {
		if (strlen(sum) != 32 || hex_u64(sum, &s->checksum_hi) ||
		    hex_u64(sum + 16, &s->checksum_lo))
			return rd_err(rd, mem, "checksum \"%s\" is not 32 lowercase hex digits", sum);
		s->has_checksum = true;
	} else if (ret != -ENOENT) {
		return ret;
	}
	ret = read_chunk_digests(rd, mem, s);
	if (ret)
		return ret;
	fdt_for_each_subnode(node, rd->fdt, mem) {
		const char *name = fdt_get_name(rd->fdt, node, NULL);

		if (!name || !name_is(name, "region@"))
			continue;
		if (s->nr_regions == STATE_MAX_REGIONS)
			return rd_err(rd, mem, "more than %d memory regions", STATE_MAX_REGIONS);
		ret = read_region(rd, node, &s->regions[s->nr_regions]);
		if (ret)
			return ret;
		s->nr_regions++;
	}
	if (node < 0 && node != -FDT_ERR_NOTFOUND)
		return rd_err(rd, mem, "bad subnodes (%s)", fdt_strerror(node));
	if (s->nr_regions == 0)
		return rd_err(rd, mem, "no memory regions");
	return 0;
}

static int read_cpuid(const struct reader *rd, int node, struct cpu_state *c)
{
	const void *v = NULL;
	int len = 0, ret = get_prop(rd, node, "cpuid", -1, false, &v, &len);
	const fdt32_t *cells = v;

	if (ret)
		return ret;
	if (len % 28)
		return rd_err(rd, node, "property \"cpuid\" is %d bytes, not a multiple of 28", len);
	if (len / 28 > CPU_STATE_MAX_CPUID)
		return rd_err(rd, node, "%d CPUID entries, at most %d", len / 28,
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

static int read_msrs(const struct reader *rd, int node, struct cpu_state *c)
{
	const void *v = NULL;
	int len = 0, ret = get_prop(rd, node, "msrs", -1, false, &v, &len);
	const fdt32_t *cells = v;

	if (ret)
		return ret;
	if (len % 12)
		return rd_err(rd, node, "property \"msrs\" is %d bytes, not a multiple of 12", len);
	if (len / 12 > CPU_STATE_MAX_MSRS)
		return rd_err(rd, node, "%d MSRs, at most %d", len / 12, CPU_STATE_MAX_MSRS);
	c->nr_msrs = (uint32_t)len / 12;
	for (uint32_t i = 0; i < c->nr_msrs; i++) {
		c->msrs[i].index = fdt32_ld(&cells[i * 3]);
		c->msrs[i].value = ((uint64_t)fdt32_ld(&cells[i * 3 + 1]) << 32) |
				   fdt32_ld(&cells[i * 3 + 2]);
	}
	return 0;
}

static int read_cpu(const struct reader *rd, int node, struct cpu_state *c)
{
	uint64_t regs[sizeof(c->regs) / sizeof(uint64_t)], dr[6];
	const void *v = NULL;
	int len = 0, ret;

	ret = read_u64_array(rd, node, "regs", regs, (int)(sizeof(regs) / sizeof(regs[0])));
	if (ret)
		return ret;
	memcpy(&c->regs, regs, sizeof(regs));
	ret = get_blob(rd, node, "sregs2", false, &c->sregs2, sizeof(c->sregs2));
	if (ret)
		return ret;
	ret = get_prop(rd, node, "xsave", -1, false, &v, &len);
	if (ret)
		return ret;
	if (len < CPU_STATE_XSAVE_MIN || len > CPU_STATE_XSAVE_MAX)
		return rd_err(rd, node, "property \"xsave\" is %d bytes, not %d..%d",
			      len, CPU_STATE_XSAVE_MIN, CPU_STATE_XSAVE_MAX);
	memcpy(c->xsave, v, (size_t)len);
	c->xsave_size = (uint32_t)len;
	ret = get_blob(rd, node, "xcrs", false, &c->xcrs, sizeof(c->xcrs));
	if (ret)
		return ret;
	ret = get_blob(rd, node, "lapic", true, &c->lapic, sizeof(c->lapic));
	if (ret == 0)
		c->have |= CPU_STATE_HAVE_LAPIC;
	else if (ret != -ENOENT)
		return ret;
	ret = get_blob(rd, node, "vcpu-events", false, &c->events, sizeof(c->events));
	if (ret)
		return ret;
	ret = get_u32(rd, node, "mp-state", false, &c->mp_state.mp_state);
	if (ret)
		return ret;
	ret = read_u64_array(rd, node, "debugregs", dr, 6);
	if (ret)
		return ret;
	memcpy(c->debugregs.db, dr, sizeof(c->debugregs.db));
	c->debugregs.dr6 = dr[4];
	c->debugregs.dr7 = dr[5];
	ret = read_cpuid(rd, node, c);
	if (ret)
		return ret;
	ret = read_msrs(rd, node, c);
	if (ret)
		return ret;
	ret = get_u32(rd, node, "tsc-khz", false, &c->tsc_khz);
	if (ret)
		return ret;
	ret = get_u64(rd, node, "tsc-offset", true, &c->tsc_offset);
	if (ret == 0)
		c->have |= CPU_STATE_HAVE_TSC_OFFSET;
	else if (ret != -ENOENT)
		return ret;
	return 0;
}

static int read_cpus(const struct reader *rd, struct state_vm *s)
{
	uint8_t seen[STATE_MAX_VCPUS] = { 0 };
	uint32_t nr, found = 0;
	int cpus, node, ret;

	ret = get_node(rd, 0, "cpus", STATE_FDT_COMPAT_CPUS, false, &cpus);
	if (ret)
		return ret;
	ret = get_u32(rd, cpus, "nr-vcpus", false, &nr);
	if (ret)
		return ret;
	if (nr == 0 || nr > STATE_MAX_VCPUS)
		return rd_err(rd, cpus, "nr-vcpus %u out of range 1..%d", nr, STATE_MAX_VCPUS);
	s->cpus = calloc(nr, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	s->nr_vcpus = nr;
	fdt_for_each_subnode(node, rd->fdt, cpus) {
		const char *name = fdt_get_name(rd->fdt, node, NULL);
		uint32_t idx;

		if (!name || !name_is(name, "cpu@"))
			continue;
		if (fdt_node_check_compatible(rd->fdt, node, STATE_FDT_COMPAT_CPU))
			return rd_err(rd, node, "not a \"%s\"", STATE_FDT_COMPAT_CPU);
		ret = get_u32(rd, node, "reg", false, &idx);
		if (ret)
			return ret;
		if (idx >= nr)
			return rd_err(rd, node, "vCPU index %u out of range (nr-vcpus %u)", idx, nr);
		if (seen[idx])
			return rd_err(rd, node, "vCPU index %u appears twice", idx);
		seen[idx] = 1;
		s->cpus[idx].index = idx;
		ret = read_cpu(rd, node, &s->cpus[idx]);
		if (ret)
			return ret;
		found++;
	}
	if (node < 0 && node != -FDT_ERR_NOTFOUND)
		return rd_err(rd, cpus, "bad subnodes (%s)", fdt_strerror(node));
	if (found != nr)
		return rd_err(rd, cpus, "vCPU count mismatch: nr-vcpus %u but %u cpu nodes",
			      nr, found);
	return 0;
}

static int read_uart(const struct reader *rd, int node, struct uart8250_state *u)
{
	static const char *const names[] = { "ier", "iir", "fcr", "lcr", "mcr",
					     "lsr", "msr", "scr", "dll", "dlm" };
	uint8_t *fields[] = { &u->ier, &u->iir, &u->fcr, &u->lcr, &u->mcr,
			      &u->lsr, &u->msr, &u->scr, &u->dll, &u->dlm };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint32_t v;
		int ret = get_u32(rd, node, names[i], false, &v);

		if (ret)
			return ret;
		if (v > 0xff)
			return rd_err(rd, node, "register %s = 0x%x is not a byte", names[i], v);
		*fields[i] = (uint8_t)v;
	}
	return 0;
}

/* 0 or 1 in a u32 cell. */
static int get_bool(const struct reader *rd, int node, const char *name, bool *out)
{
	uint32_t v;
	int ret = get_u32(rd, node, name, false, &v);

	if (ret)
		return ret;
	if (v > 1)
		return rd_err(rd, node, "property \"%s\" = %u, expected 0 or 1", name, v);
	*out = v;
	return 0;
}

static int read_virtqueue(const struct reader *rd, int node, struct virtio_mmio_state *t)
{
	struct virtio_mmio_queue_state *q;
	uint32_t index;
	int ret;

	if (fdt_node_check_compatible(rd->fdt, node, STATE_FDT_COMPAT_VIRTQUEUE))
		return rd_err(rd, node, "not a \"%s\"", STATE_FDT_COMPAT_VIRTQUEUE);
	ret = get_u32(rd, node, "reg", false, &index);
	if (ret)
		return ret;
	if (index >= VIRTIO_MMIO_MAX_QUEUES)
		return rd_err(rd, node, "queue index %u out of range (at most %d queues)", index,
			      VIRTIO_MMIO_MAX_QUEUES);
	q = &t->q[index];
	if (q->present)
		return rd_err(rd, node, "queue index %u given twice", index);
	q->present = true;
	ret = get_u32(rd, node, "size", false, &q->size);
	if (!ret)
		ret = get_bool(rd, node, "ready", &q->ready);
	if (!ret)
		ret = get_u64(rd, node, "desc", false, &q->desc);
	if (!ret)
		ret = get_u64(rd, node, "driver", false, &q->avail);
	if (!ret)
		ret = get_u64(rd, node, "device", false, &q->used);
	if (!ret)
		ret = get_u32(rd, node, "last-avail", false, &q->last_avail);
	if (!ret)
		ret = get_u32(rd, node, "used-idx", false, &q->used_idx);
	if (ret)
		return ret;
	t->nr_queues++;
	return 0;
}

static int read_virtio_mmio(const struct reader *rd, int node, struct virtio_mmio_state *t);

static int read_virtio_blk(const struct reader *rd, int node, struct virtio_blk_state *d)
{
	struct virtio_mmio_state *t = &d->t;
	const void *v = NULL;
	int ret;

	memset(d, 0, sizeof(*d));
	ret = get_prop(rd, node, "reg", 8, false, &v, NULL);
	if (ret)
		return ret;
	d->base = fdt32_ld(v);
	if (fdt32_ld((const fdt32_t *)v + 1) != VM_VIRTIO_MMIO_SIZE)
		return rd_err(rd, node, "reg size 0x%x, expected 0x%x",
			      fdt32_ld((const fdt32_t *)v + 1), VM_VIRTIO_MMIO_SIZE);
	ret = get_u32(rd, node, "slot", false, &d->slot);
	if (!ret)
		ret = get_u32(rd, node, "gsi", false, &d->gsi);
	if (!ret)
		ret = get_str(rd, node, "disk-path", false, d->ident.path, sizeof(d->ident.path) - 1);
	if (!ret)
		ret = get_u64(rd, node, "disk-dev", false, &d->ident.dev);
	if (!ret)
		ret = get_u64(rd, node, "disk-ino", false, &d->ident.ino);
	if (!ret)
		ret = get_u64(rd, node, "disk-size", false, &d->ident.size);
	if (!ret)
		ret = get_bool(rd, node, "readonly", &d->readonly);
	if (!ret)
		ret = get_str(rd, node, "disk-id", false, d->id, VIRTIO_BLK_ID_MAX);
	if (ret)
		return ret;
	return read_virtio_mmio(rd, node, t);
}

/* The transport's properties and queue@N subnodes, shared by every virtio device node. */
static int read_virtio_mmio(const struct reader *rd, int node, struct virtio_mmio_state *t)
{
	const void *v = NULL;
	int len = 0, ret, q;

	ret = get_u32(rd, node, "device-id", false, &t->device_id);
	if (!ret)
		ret = get_u64(rd, node, "device-features", false, &t->device_features);
	if (!ret)
		ret = get_u64(rd, node, "driver-features", false, &t->driver_features);
	if (!ret)
		ret = get_u32(rd, node, "device-features-sel", false, &t->device_features_sel);
	if (!ret)
		ret = get_u32(rd, node, "driver-features-sel", false, &t->driver_features_sel);
	if (!ret)
		ret = get_u32(rd, node, "queue-sel", false, &t->queue_sel);
	if (!ret)
		ret = get_u32(rd, node, "status", false, &t->status);
	if (!ret)
		ret = get_u32(rd, node, "interrupt-status", false, &t->interrupt_status);
	if (!ret)
		ret = get_u32(rd, node, "config-generation", false, &t->config_generation);
	if (!ret)
		ret = get_bool(rd, node, "device-error", &t->broken);
	if (!ret)
		ret = get_prop(rd, node, "config", -1, false, &v, &len);
	if (ret)
		return ret;
	if (len > VIRTIO_MMIO_CONFIG_MAX)
		return rd_err(rd, node, "property \"config\" is %d bytes, at most %d", len,
			      VIRTIO_MMIO_CONFIG_MAX);
	memcpy(t->config, v, (size_t)len);
	t->config_len = (uint32_t)len;
	fdt_for_each_subnode(q, rd->fdt, node) {
		ret = read_virtqueue(rd, q, t);
		if (ret)
			return ret;
	}
	if (q < 0 && q != -FDT_ERR_NOTFOUND)
		return rd_err(rd, node, "bad subnodes (%s)", fdt_strerror(q));
	return 0;
}

/* "reg" (base, size) of a virtio device node, checked against the window size. */
static int read_virtio_reg(const struct reader *rd, int node, uint64_t *base)
{
	const void *v = NULL;
	int ret = get_prop(rd, node, "reg", 8, false, &v, NULL);

	if (ret)
		return ret;
	*base = fdt32_ld(v);
	if (fdt32_ld((const fdt32_t *)v + 1) != VM_VIRTIO_MMIO_SIZE)
		return rd_err(rd, node, "reg size 0x%x, expected 0x%x",
			      fdt32_ld((const fdt32_t *)v + 1), VM_VIRTIO_MMIO_SIZE);
	return 0;
}

static int read_virtio_net(const struct reader *rd, int node, struct virtio_net_state *d)
{
	const void *v = NULL;
	int ret;

	memset(d, 0, sizeof(*d));
	ret = read_virtio_reg(rd, node, &d->base);
	if (!ret)
		ret = get_u32(rd, node, "slot", false, &d->slot);
	if (!ret)
		ret = get_u32(rd, node, "gsi", false, &d->gsi);
	if (!ret)
		ret = get_str(rd, node, "tap", false, d->tap, sizeof(d->tap) - 1);
	if (!ret)
		ret = get_str(rd, node, "bridge", false, d->bridge, sizeof(d->bridge) - 1);
	if (!ret)
		ret = get_prop(rd, node, "mac", 6, false, &v, NULL);
	if (ret)
		return ret;
	memcpy(d->mac, v, 6);
	return read_virtio_mmio(rd, node, &d->t);
}

/*
 * Every device under /devices (a node with a compatible) must be one this
 * reader knows: a state naming a device we would silently drop is
 * refused. A node without a compatible is not a device; a newer minor
 * may add such optional data and it is ignored like unknown properties.
 */
static int check_device_nodes(const struct reader *rd, int dev, struct state_vm *s)
{
	static const char *const known[] = {
		STATE_FDT_COMPAT_IRQCHIP, STATE_FDT_COMPAT_PIT, STATE_FDT_COMPAT_KVMCLOCK,
		STATE_FDT_COMPAT_UART,
	};
	int node, ret;

	fdt_for_each_subnode(node, rd->fdt, dev) {
		const char *c = fdt_getprop(rd->fdt, node, "compatible", NULL);
		bool ok = false;

		if (!fdt_node_check_compatible(rd->fdt, node, STATE_FDT_COMPAT_VIRTIO_BLK)) {
			if (s->nr_disks >= STATE_MAX_DISKS)
				return rd_err(rd, node, "more than %d virtio-blk devices",
					      STATE_MAX_DISKS);
			ret = read_virtio_blk(rd, node, &s->disks[s->nr_disks]);
			if (ret)
				return ret;
			s->nr_disks++;
			continue;
		}
		if (!fdt_node_check_compatible(rd->fdt, node, STATE_FDT_COMPAT_VIRTIO_NET)) {
			if (s->nr_nets >= STATE_MAX_NETS)
				return rd_err(rd, node, "more than %d virtio-net devices",
					      STATE_MAX_NETS);
			ret = read_virtio_net(rd, node, &s->nets[s->nr_nets]);
			if (ret)
				return ret;
			s->nr_nets++;
			continue;
		}
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok = ok || !fdt_node_check_compatible(rd->fdt, node, known[i]);
		if (!ok && c)
			return rd_err(rd, node, "device compatible \"%.64s\" not understood",
				      c ? c : "(none)");
	}
	if (node < 0 && node != -FDT_ERR_NOTFOUND)
		return rd_err(rd, dev, "bad subnodes (%s)", fdt_strerror(node));
	return 0;
}

static int read_devices(const struct reader *rd, struct state_vm *s)
{
	struct vm_devices_state *d = &s->devices;
	int dev, node, ret;

	ret = get_node(rd, 0, "devices", STATE_FDT_COMPAT_DEVICES, false, &dev);
	if (ret)
		return ret;
	ret = get_node(rd, dev, "irqchip", STATE_FDT_COMPAT_IRQCHIP, true, &node);
	if (ret == 0) {
		ret = get_blob(rd, node, "pic-master", false, &d->pic_master, sizeof(d->pic_master));
		if (!ret)
			ret = get_blob(rd, node, "pic-slave", false, &d->pic_slave,
				       sizeof(d->pic_slave));
		if (!ret)
			ret = get_blob(rd, node, "ioapic", false, &d->ioapic, sizeof(d->ioapic));
		if (ret)
			return ret;
		d->have |= VM_DEVICES_HAVE_IRQCHIP;
	} else if (ret != -ENOENT) {
		return ret;
	}
	ret = get_node(rd, dev, "pit", STATE_FDT_COMPAT_PIT, true, &node);
	if (ret == 0) {
		ret = get_blob(rd, node, "state", false, &d->pit, sizeof(d->pit));
		if (ret)
			return ret;
		d->have |= VM_DEVICES_HAVE_PIT;
	} else if (ret != -ENOENT) {
		return ret;
	}
	ret = get_node(rd, dev, "kvmclock", STATE_FDT_COMPAT_KVMCLOCK, true, &node);
	if (ret == 0) {
		uint64_t clock, realtime, host_tsc;

		ret = get_u64(rd, node, "clock", false, &clock);
		if (!ret)
			ret = get_u32(rd, node, "flags", false, &d->clock.flags);
		if (!ret)
			ret = get_u64(rd, node, "realtime", false, &realtime);
		if (!ret)
			ret = get_u64(rd, node, "host-tsc", false, &host_tsc);
		if (!ret)
			ret = get_u64(rd, node, "wall-ns", false, &d->clock_wall_ns);
		if (ret)
			return ret;
		d->clock.clock = clock;
		d->clock.realtime = realtime;
		d->clock.host_tsc = host_tsc;
		d->have |= VM_DEVICES_HAVE_CLOCK;
	} else if (ret != -ENOENT) {
		return ret;
	}
	ret = get_node(rd, dev, "uart@3f8", STATE_FDT_COMPAT_UART, true, &node);
	if (ret == 0) {
		ret = read_uart(rd, node, &s->uart);
		if (ret)
			return ret;
		s->has_uart = true;
	} else if (ret != -ENOENT) {
		return ret;
	}
	return check_device_nodes(rd, dev, s);
}

static int read_root(const struct reader *rd, struct state_vm *s)
{
	const char *root;
	const void *v = NULL;
	int ret;

	/* The version first: a newer major may have changed everything else. */
	ret = get_prop(rd, 0, "kvmlu,format", 8, false, &v, NULL);
	if (ret)
		return ret;
	s->format_major = fdt32_ld(v);
	s->format_minor = fdt32_ld((const fdt32_t *)v + 1);
	if (s->format_major < STATE_FORMAT_MAJOR || s->format_major > STATE_FORMAT_MAJOR_MAX)
		return kvmlu_err(rd->err, rd->errlen, -EPROTONOSUPPORT,
				    "state FDT format %u.%u not understood: this kvmlu reads %d.x and %d.x",
				    s->format_major, s->format_minor, STATE_FORMAT_MAJOR,
				    STATE_FORMAT_MAJOR_MAX);
	root = s->format_major == STATE_FORMAT_MAJOR ? STATE_FDT_COMPAT_ROOT
						     : STATE_FDT_COMPAT_ROOT_V2;
	if (fdt_node_check_compatible(rd->fdt, 0, root))
		return rd_err(rd, 0, "root is not \"%s\"", root);
	ret = get_str(rd, 0, "kvmlu,version", false, s->kvmlu_version, STATE_VERSION_MAX);
	if (!ret)
		ret = get_str(rd, 0, "vm-name", false, s->name, STATE_NAME_MAX);
	if (!ret)
		ret = get_str(rd, 0, "uuid", false, s->uuid, STATE_UUID_LEN);
	return ret;
}

int state_fdt_read(const void *blob, size_t size, struct state_vm *s,
		   char *err, size_t errlen)
{
	struct reader rd = { .fdt = blob, .err = err, .errlen = errlen };
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
	ret = read_root(&rd, s);
	if (!ret)
		ret = read_memory(&rd, s);
	if (!ret)
		ret = read_cpus(&rd, s);
	if (!ret)
		ret = read_devices(&rd, s);
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

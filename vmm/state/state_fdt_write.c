// SPDX-License-Identifier: GPL-2.0
/*
 * Serialize a captured VM state into an FDT with libfdt's sequential
 * writer (schema: docs/state-format.md). Runs inside the blackout, so it
 * builds the tree in one pass into a buffer sized from the state, and
 * only grows it (rare: the estimate is generous) on FDT_ERR_NOSPACE.
 * A device's node is written by its type (struct vm_device_type's
 * encode, vmm/device.h): this file names no device.
 * Nothing here touches KVM or the VM; a failure just frees the buffer.
 */
#include <errno.h>
#include <inttypes.h>
#include <libfdt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "vmm/state/state_fdt.h"
#include "vmm/vm_virtio.h"

/* Bail out of a writer function on the first libfdt error. */
#define TRY(x) do { int r_ = (x); if (r_ < 0) return r_; } while (0)

static int prop_u64(void *fdt, const char *name, uint64_t v)
{
	return fdt_property_u64(fdt, name, v);
}

/* struct of n u64 fields as 2n big-endian cells. */
static int prop_u64_array(void *fdt, const char *name, const uint64_t *v, size_t n)
{
	fdt64_t buf[32];

	if (n > sizeof(buf) / sizeof(buf[0]))
		return -FDT_ERR_BADVALUE;
	for (size_t i = 0; i < n; i++)
		buf[i] = cpu_to_fdt64(v[i]);
	return fdt_property(fdt, name, buf, (int)(n * sizeof(buf[0])));
}

/* Each digest as two u64 cells, high then low: 16 bytes a chunk. */
static int write_chunk_digests(void *fdt, const struct state_vm *s)
{
	char *v;
	int r;

	if (s->nr_chunk_digests > STATE_MAX_CHUNK_DIGESTS)
		return -FDT_ERR_BADVALUE;
	r = fdt_property_placeholder(fdt, "chunk-digests",
				     (int)(s->nr_chunk_digests * 16), (void **)&v);
	if (r < 0)
		return r;
	/* FDT properties are 4-byte aligned only: copy, do not store u64s. */
	for (uint64_t i = 0; i < s->nr_chunk_digests; i++) {
		fdt64_t hi = cpu_to_fdt64(s->chunk_digests[i].hi);
		fdt64_t lo = cpu_to_fdt64(s->chunk_digests[i].lo);

		memcpy(v + 16 * i, &hi, 8);
		memcpy(v + 16 * i + 8, &lo, 8);
	}
	return 0;
}

static int write_memory(void *fdt, const struct state_vm *s)
{
	char node[32], sum[33];
	uint64_t reg[2];

	TRY(fdt_begin_node(fdt, "memory"));
	TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_MEMORY));
	TRY(fdt_property_u32(fdt, "#address-cells", 2));
	TRY(fdt_property_u32(fdt, "#size-cells", 2));
	TRY(fdt_property_string(fdt, "backend", state_backend_name(s->backend)));
	if (s->has_checksum) {
		snprintf(sum, sizeof(sum), "%016" PRIx64 "%016" PRIx64,
			 s->checksum_hi, s->checksum_lo);
		TRY(fdt_property_string(fdt, "checksum", sum));
	}
	if (s->has_checksum && s->nr_chunk_digests)
		TRY(write_chunk_digests(fdt, s));
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct state_vm_region *r = &s->regions[i];

		snprintf(node, sizeof(node), "region@%" PRIx64, r->gpa);
		TRY(fdt_begin_node(fdt, node));
		TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_REGION));
		reg[0] = r->gpa;
		reg[1] = r->size;
		TRY(prop_u64_array(fdt, "reg", reg, 2));
		TRY(prop_u64(fdt, "file-offset", r->file_offset));
		TRY(prop_u64(fdt, "token", r->token));
		TRY(fdt_property_u32(fdt, "slot", r->slot));
		TRY(fdt_end_node(fdt));
	}
	return fdt_end_node(fdt);
}

static int write_cpuid(void *fdt, const struct cpu_state *c)
{
	fdt32_t *cells;
	void *p;

	TRY(fdt_property_placeholder(fdt, "cpuid", (int)(c->nr_cpuid * 7 * 4), &p));
	cells = p;
	for (uint32_t i = 0; i < c->nr_cpuid; i++) {
		const struct kvm_cpuid_entry2 *e = &c->cpuid[i];

		cells[i * 7 + 0] = cpu_to_fdt32(e->function);
		cells[i * 7 + 1] = cpu_to_fdt32(e->index);
		cells[i * 7 + 2] = cpu_to_fdt32(e->flags);
		cells[i * 7 + 3] = cpu_to_fdt32(e->eax);
		cells[i * 7 + 4] = cpu_to_fdt32(e->ebx);
		cells[i * 7 + 5] = cpu_to_fdt32(e->ecx);
		cells[i * 7 + 6] = cpu_to_fdt32(e->edx);
	}
	return 0;
}

static int write_msrs(void *fdt, const struct cpu_state *c)
{
	fdt32_t *cells;
	void *p;

	TRY(fdt_property_placeholder(fdt, "msrs", (int)(c->nr_msrs * 3 * 4), &p));
	cells = p;
	for (uint32_t i = 0; i < c->nr_msrs; i++) {
		cells[i * 3 + 0] = cpu_to_fdt32(c->msrs[i].index);
		cells[i * 3 + 1] = cpu_to_fdt32((uint32_t)(c->msrs[i].value >> 32));
		cells[i * 3 + 2] = cpu_to_fdt32((uint32_t)c->msrs[i].value);
	}
	return 0;
}

static int write_cpu(void *fdt, const struct cpu_state *c)
{
	uint64_t dr[6], regs[sizeof(c->regs) / sizeof(uint64_t)];
	char node[32];

	snprintf(node, sizeof(node), "cpu@%x", c->index);
	TRY(fdt_begin_node(fdt, node));
	TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_CPU));
	TRY(fdt_property_u32(fdt, "reg", c->index));
	/* struct kvm_regs is 18 u64 in uAPI order: readable cells in dtc. */
	memcpy(regs, &c->regs, sizeof(regs));
	TRY(prop_u64_array(fdt, "regs", regs, sizeof(regs) / sizeof(regs[0])));
	TRY(fdt_property(fdt, "sregs2", &c->sregs2, sizeof(c->sregs2)));
	TRY(fdt_property(fdt, "xsave", c->xsave, (int)c->xsave_size));
	TRY(fdt_property(fdt, "xcrs", &c->xcrs, sizeof(c->xcrs)));
	if (c->have & CPU_STATE_HAVE_LAPIC)
		TRY(fdt_property(fdt, "lapic", &c->lapic, sizeof(c->lapic)));
	TRY(fdt_property(fdt, "vcpu-events", &c->events, sizeof(c->events)));
	TRY(fdt_property_u32(fdt, "mp-state", c->mp_state.mp_state));
	memcpy(dr, c->debugregs.db, sizeof(c->debugregs.db));
	dr[4] = c->debugregs.dr6;
	dr[5] = c->debugregs.dr7;
	TRY(prop_u64_array(fdt, "debugregs", dr, 6));
	TRY(write_cpuid(fdt, c));
	TRY(write_msrs(fdt, c));
	TRY(fdt_property_u32(fdt, "tsc-khz", c->tsc_khz));
	if (c->have & CPU_STATE_HAVE_TSC_OFFSET)
		TRY(prop_u64(fdt, "tsc-offset", c->tsc_offset));
	return fdt_end_node(fdt);
}

static int write_cpus(void *fdt, const struct state_vm *s)
{
	TRY(fdt_begin_node(fdt, "cpus"));
	TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_CPUS));
	TRY(fdt_property_u32(fdt, "#address-cells", 1));
	TRY(fdt_property_u32(fdt, "#size-cells", 0));
	TRY(fdt_property_u32(fdt, "nr-vcpus", s->nr_vcpus));
	for (uint32_t i = 0; i < s->nr_vcpus; i++)
		TRY(write_cpu(fdt, &s->cpus[i]));
	return fdt_end_node(fdt);
}

static int write_uart(void *fdt, const struct uart8250_state *u)
{
	fdt32_t reg[2] = { cpu_to_fdt32(0x3f8), cpu_to_fdt32(8) };

	TRY(fdt_begin_node(fdt, "uart@3f8"));
	TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_UART));
	TRY(fdt_property(fdt, "reg", reg, sizeof(reg)));
	TRY(fdt_property_u32(fdt, "ier", u->ier));
	TRY(fdt_property_u32(fdt, "iir", u->iir));
	TRY(fdt_property_u32(fdt, "fcr", u->fcr));
	TRY(fdt_property_u32(fdt, "lcr", u->lcr));
	TRY(fdt_property_u32(fdt, "mcr", u->mcr));
	TRY(fdt_property_u32(fdt, "lsr", u->lsr));
	TRY(fdt_property_u32(fdt, "msr", u->msr));
	TRY(fdt_property_u32(fdt, "scr", u->scr));
	TRY(fdt_property_u32(fdt, "dll", u->dll));
	TRY(fdt_property_u32(fdt, "dlm", u->dlm));
	return fdt_end_node(fdt);
}

/*
 * A device's node: KIND@base, where it sits and how it interrupts (every
 * type alike), then the type's own properties and subnodes (its encode).
 */
static int write_device(void *fdt, const struct vm_device_type *t, const void *st)
{
	uint64_t base = *vm_device_state_base(t, (void *)st);
	fdt32_t reg[2] = { cpu_to_fdt32((uint32_t)base), cpu_to_fdt32(VM_VIRTIO_MMIO_SIZE) };
	char node[48];

	snprintf(node, sizeof(node), "%s@%" PRIx64, t->kind, base);
	TRY(fdt_begin_node(fdt, node));
	TRY(fdt_property_string(fdt, "compatible", t->compat));
	TRY(fdt_property(fdt, "reg", reg, sizeof(reg)));
	TRY(fdt_property_u32(fdt, "#address-cells", 1));
	TRY(fdt_property_u32(fdt, "#size-cells", 0));
	TRY(fdt_property_u32(fdt, "slot", *vm_device_state_slot(t, (void *)st)));
	TRY(fdt_property_u32(fdt, "gsi", *vm_device_state_gsi(t, (void *)st)));
	TRY(t->encode(fdt, st));
	return fdt_end_node(fdt);
}

static int write_devices(void *fdt, const struct state_vm *s)
{
	const struct vm_devices_state *d = &s->devices;

	TRY(fdt_begin_node(fdt, "devices"));
	TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_DEVICES));
	TRY(fdt_property_u32(fdt, "#address-cells", 1));
	TRY(fdt_property_u32(fdt, "#size-cells", 1));
	/*
	 * Only on pci: a virtio-mmio VM's state stays what it was before 2.2.
	 * Also without devices (its empty PCI bus comes back; the format stays 1.1).
	 */
	if (s->virtio_transport == STATE_VIRTIO_TRANSPORT_PCI)
		TRY(fdt_property_string(fdt, "virtio-transport", "pci"));
	if (d->have & VM_DEVICES_HAVE_IRQCHIP) {
		TRY(fdt_begin_node(fdt, "irqchip"));
		TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_IRQCHIP));
		TRY(fdt_property(fdt, "pic-master", &d->pic_master, sizeof(d->pic_master)));
		TRY(fdt_property(fdt, "pic-slave", &d->pic_slave, sizeof(d->pic_slave)));
		TRY(fdt_property(fdt, "ioapic", &d->ioapic, sizeof(d->ioapic)));
		TRY(fdt_end_node(fdt));
	}
	if (d->have & VM_DEVICES_HAVE_PIT) {
		TRY(fdt_begin_node(fdt, "pit"));
		TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_PIT));
		TRY(fdt_property(fdt, "state", &d->pit, sizeof(d->pit)));
		TRY(fdt_end_node(fdt));
	}
	if (d->have & VM_DEVICES_HAVE_CLOCK) {
		TRY(fdt_begin_node(fdt, "kvmclock"));
		TRY(fdt_property_string(fdt, "compatible", STATE_FDT_COMPAT_KVMCLOCK));
		TRY(prop_u64(fdt, "clock", d->clock.clock));
		TRY(fdt_property_u32(fdt, "flags", d->clock.flags));
		TRY(prop_u64(fdt, "realtime", d->clock.realtime));
		TRY(prop_u64(fdt, "host-tsc", d->clock.host_tsc));
		TRY(prop_u64(fdt, "wall-ns", d->clock_wall_ns));
		TRY(fdt_end_node(fdt));
	}
	if (s->has_uart)
		TRY(write_uart(fdt, &s->uart));
	for (uint32_t k = 0; k < s->nr_devs && k < STATE_MAX_DEVICES; k++)
		TRY(write_device(fdt, s->devs[k].type, s->devs[k].state.bytes));
	return fdt_end_node(fdt);
}

static int write_tree(void *fdt, size_t size, const struct state_vm *s)
{
	uint32_t major, minor;
	fdt32_t fmt[2];

	state_format_of(s, &major, &minor);
	fmt[0] = cpu_to_fdt32(major);
	fmt[1] = cpu_to_fdt32(minor);

	TRY(fdt_create(fdt, (int)size));
	TRY(fdt_finish_reservemap(fdt));
	TRY(fdt_begin_node(fdt, ""));
	TRY(fdt_property_string(fdt, "compatible", major == STATE_FORMAT_MAJOR_VIRTIO
				? STATE_FDT_COMPAT_ROOT_V2 : STATE_FDT_COMPAT_ROOT));
	TRY(fdt_property(fdt, "kvmlu,format", fmt, sizeof(fmt)));
	TRY(fdt_property_string(fdt, "kvmlu,version", s->kvmlu_version));
	TRY(fdt_property_string(fdt, "vm-name", s->name));
	TRY(fdt_property_string(fdt, "uuid", s->uuid));
	TRY(write_memory(fdt, s));
	TRY(write_cpus(fdt, s));
	TRY(write_devices(fdt, s));
	TRY(fdt_end_node(fdt));
	return fdt_finish(fdt);
}

int state_fdt_write(const struct state_vm *s, void **blob, size_t *size,
		    char *err, size_t errlen)
{
	/* Per vCPU: XSAVE, 256 CPUID and 512 MSR entries, structs, names. */
	size_t len = 8192 + (size_t)state_vm_nr_devices(s) * (PATH_MAX + 2048) +
		     (size_t)s->nr_vcpus * (CPU_STATE_XSAVE_MAX + 16384) +
		     (size_t)s->nr_chunk_digests * 16;
	void *buf;
	int r;

	for (;;) {
		buf = malloc(len);
		if (!buf)
			return -ENOMEM;
		r = write_tree(buf, len, s);
		if (r != -FDT_ERR_NOSPACE || len >= STATE_FDT_MAX_SIZE)
			break;
		free(buf);
		len *= 2;
	}
	if (r < 0) {
		free(buf);
		return kvmlu_err(err, errlen, -EINVAL, "state FDT write: %s",
				    fdt_strerror(r));
	}
	*size = fdt_totalsize(buf);
	*blob = buf;
	return 0;
}

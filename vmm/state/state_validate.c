// SPDX-License-Identifier: GPL-2.0
/*
 * Range and consistency checks of a parsed VM state (see
 * state_validate.h). Runs after state_fdt_read() and before the restore
 * creates anything in KVM, so a refused state leaves the running VM (on
 * upgrade) or the preserved files (after kexec) untouched. The limits are
 * the ones KVM or x86 impose; checking them here turns a KVM EINVAL in the
 * middle of a restore into an error that names the value.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "common/err.h"
#include "guestmem/digest_table.h"
#include "vmm/state/state_validate.h"
#include "vmm/vm_virtio.h"

#define PAGE_4K			4096ULL
#define GPA_LIMIT		(1ULL << 52)	/* x86 MAXPHYADDR ceiling */
#define TSC_KHZ_MAX		(20u * 1000 * 1000)	/* 20 GHz */
#define MEMSLOT_MAX		32768
#define RFLAGS_FIXED1		(1ULL << 1)

static int check_identity(const struct state_vm *s, char *err, size_t errlen)
{
	size_t n = strlen(s->name);

	if (n == 0)
		return kvmlu_err(err, errlen, -EINVAL, "state: empty VM name");
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s->name[i]) && !strchr("._-", s->name[i]))
			return kvmlu_err(err, errlen, -EINVAL,
					    "state: VM name \"%s\" has character 0x%02x",
					    s->name, (unsigned char)s->name[i]);
	if (strlen(s->uuid) != STATE_UUID_LEN)
		goto bad_uuid;
	for (int i = 0; i < STATE_UUID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s->uuid[i] != '-' : !isxdigit((unsigned char)s->uuid[i]))
			goto bad_uuid;
	}
	return 0;
bad_uuid:
	return kvmlu_err(err, errlen, -EINVAL, "state: uuid \"%s\" is not 8-4-4-4-12 hex",
			    s->uuid);
}

static int check_memory(const struct state_vm *s, char *err, size_t errlen)
{
	if (s->nr_regions == 0 || s->nr_regions > STATE_MAX_REGIONS)
		return kvmlu_err(err, errlen, -EINVAL, "state: %u memory regions, want 1..%d",
				    s->nr_regions, STATE_MAX_REGIONS);
	if (s->backend != STATE_BACKEND_MEMFD && s->backend != STATE_BACKEND_GUEST_MEMFD)
		return kvmlu_err(err, errlen, -EINVAL, "state: unknown backend %d", s->backend);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct state_vm_region *r = &s->regions[i];

		if (r->size == 0 || r->size % PAGE_4K || r->gpa % PAGE_4K ||
		    r->file_offset % PAGE_4K)
			return kvmlu_err(err, errlen, -EINVAL,
					    "state: memory region %u (gpa 0x%llx size 0x%llx offset 0x%llx) not 4 KiB aligned or empty",
					    i, (unsigned long long)r->gpa,
					    (unsigned long long)r->size,
					    (unsigned long long)r->file_offset);
		if (r->gpa >= GPA_LIMIT || r->size > GPA_LIMIT - r->gpa ||
		    r->file_offset > UINT64_MAX - r->size)
			return kvmlu_err(err, errlen, -EINVAL,
					    "state: memory region %u (gpa 0x%llx size 0x%llx) beyond the 2^52 address limit",
					    i, (unsigned long long)r->gpa,
					    (unsigned long long)r->size);
		if (r->slot >= MEMSLOT_MAX)
			return kvmlu_err(err, errlen, -EINVAL,
					    "state: memory region %u slot %u out of range", i, r->slot);
		for (uint32_t j = 0; j < i; j++) {
			const struct state_vm_region *o = &s->regions[j];

			if (r->gpa < o->gpa + o->size && o->gpa < r->gpa + r->size)
				return kvmlu_err(err, errlen, -EINVAL,
						    "state: memory regions %u (gpa 0x%llx) and %u (gpa 0x%llx) overlap",
						    j, (unsigned long long)o->gpa, i,
						    (unsigned long long)r->gpa);
			if (r->slot == o->slot)
				return kvmlu_err(err, errlen, -EINVAL,
						    "state: memory regions %u and %u share slot %u",
						    j, i, r->slot);
			if (r->token == o->token)
				return kvmlu_err(err, errlen, -EINVAL,
						    "state: memory regions %u and %u share file token %llu",
						    j, i, (unsigned long long)r->token);
		}
	}
	return 0;
}

/*
 * The chunk digests must be as many as the regions have 2 MiB chunks and
 * combine into the checksum next to them: a table that does not is not
 * the memory the checksum describes.
 */
static int check_chunk_digests(const struct state_vm *s, char *err, size_t errlen)
{
	struct guestmem layout = { .nr = s->nr_regions };
	uint64_t want, hi, lo;

	if (!s->nr_chunk_digests)
		return 0;
	if (!s->has_checksum)
		return kvmlu_err(err, errlen, -EINVAL, "state: memory chunk-digests without a checksum");
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		layout.r[i].gpa = s->regions[i].gpa;
		layout.r[i].size = s->regions[i].size;
	}
	want = guestmem_digest_chunks(&layout);
	if (s->nr_chunk_digests != want)
		return kvmlu_err(err, errlen, -EINVAL,
				 "state: %llu memory chunk-digests, the regions have %llu chunks of 2 MiB",
				 (unsigned long long)s->nr_chunk_digests, (unsigned long long)want);
	if (guestmem_digest_sum(&layout, s->chunk_digests, s->nr_chunk_digests, &hi, &lo))
		return kvmlu_err(err, errlen, -EINVAL, "state: memory chunk-digests cannot be summed");
	if (hi != s->checksum_hi || lo != s->checksum_lo)
		return kvmlu_err(err, errlen, -EINVAL,
				 "state: memory chunk-digests sum to %016llx%016llx, checksum is %016llx%016llx",
				 (unsigned long long)hi, (unsigned long long)lo,
				 (unsigned long long)s->checksum_hi, (unsigned long long)s->checksum_lo);
	return 0;
}

static int check_cpu(const struct cpu_state *c, char *err, size_t errlen)
{
	const struct kvm_vcpu_events *ev = &c->events;

	if (c->mp_state.mp_state > KVM_MP_STATE_SUSPENDED)
		return kvmlu_err(err, errlen, -EINVAL, "state: vCPU %u mp-state %u unknown",
				    c->index, c->mp_state.mp_state);
	if (c->tsc_khz == 0 || c->tsc_khz > TSC_KHZ_MAX)
		return kvmlu_err(err, errlen, -EINVAL, "state: vCPU %u tsc-khz %u out of range 1..%u",
				    c->index, c->tsc_khz, TSC_KHZ_MAX);
	if (!(c->regs.rflags & RFLAGS_FIXED1))
		return kvmlu_err(err, errlen, -EINVAL,
				    "state: vCPU %u rflags 0x%llx lacks the always-set bit 1",
				    c->index, (unsigned long long)c->regs.rflags);
	if (c->xsave_size < CPU_STATE_XSAVE_MIN || c->xsave_size > CPU_STATE_XSAVE_MAX ||
	    c->xsave_size % 64)
		return kvmlu_err(err, errlen, -EINVAL,
				    "state: vCPU %u xsave size %u not a multiple of 64 in %d..%d",
				    c->index, c->xsave_size, CPU_STATE_XSAVE_MIN, CPU_STATE_XSAVE_MAX);
	if (c->xcrs.nr_xcrs > KVM_MAX_XCRS)
		return kvmlu_err(err, errlen, -EINVAL, "state: vCPU %u has %u XCRs, at most %d",
				    c->index, c->xcrs.nr_xcrs, KVM_MAX_XCRS);
	if (ev->exception.nr >= 32 || ev->exception.injected > 1 || ev->exception.pending > 1 ||
	    ev->nmi.injected > 1 || ev->nmi.pending > 1 || ev->nmi.masked > 1)
		return kvmlu_err(err, errlen, -EINVAL,
				    "state: vCPU %u vcpu-events out of range (exception %u, nmi %u/%u/%u)",
				    c->index, ev->exception.nr, ev->nmi.injected,
				    ev->nmi.pending, ev->nmi.masked);
	if (c->nr_cpuid > CPU_STATE_MAX_CPUID || c->nr_msrs > CPU_STATE_MAX_MSRS)
		return kvmlu_err(err, errlen, -EINVAL, "state: vCPU %u has %u CPUID entries, %u MSRs",
				    c->index, c->nr_cpuid, c->nr_msrs);
	for (uint32_t i = 0; i < c->nr_msrs; i++)
		for (uint32_t j = 0; j < i; j++)
			if (c->msrs[i].index == c->msrs[j].index)
				return kvmlu_err(err, errlen, -EINVAL,
						    "state: vCPU %u MSR 0x%x appears twice",
						    c->index, c->msrs[i].index);
	return 0;
}

static int check_cpus(const struct state_vm *s, uint32_t expect, char *err, size_t errlen)
{
	const struct cpu_state *c0 = &s->cpus[0];
	int ret;

	if (!s->cpus || s->nr_vcpus == 0 || s->nr_vcpus > STATE_MAX_VCPUS)
		return kvmlu_err(err, errlen, -EINVAL, "state: %u vCPUs, want 1..%d",
				    s->nr_vcpus, STATE_MAX_VCPUS);
	if (expect && s->nr_vcpus != expect)
		return kvmlu_err(err, errlen, -EINVAL,
				    "state: vCPU count mismatch: state has %u, this VM %u",
				    s->nr_vcpus, expect);
	for (uint32_t i = 0; i < s->nr_vcpus; i++) {
		const struct cpu_state *c = &s->cpus[i];

		if (c->index != i)
			return kvmlu_err(err, errlen, -EINVAL, "state: vCPU %u has index %u",
					    i, c->index);
		ret = check_cpu(c, err, errlen);
		if (ret)
			return ret;
		/* One TSC rate per VM: the guest assumes its TSCs tick together. */
		if (c->tsc_khz != c0->tsc_khz)
			return kvmlu_err(err, errlen, -EINVAL,
					    "state: vCPU %u tsc-khz %u differs from vCPU 0's %u",
					    i, c->tsc_khz, c0->tsc_khz);
		if ((c->have & CPU_STATE_HAVE_LAPIC) !=
		    (s->devices.have & VM_DEVICES_HAVE_IRQCHIP ? CPU_STATE_HAVE_LAPIC : 0))
			return kvmlu_err(err, errlen, -EINVAL,
					    "state: vCPU %u %s a LAPIC but the VM %s an irqchip",
					    i, c->have & CPU_STATE_HAVE_LAPIC ? "has" : "lacks",
					    s->devices.have & VM_DEVICES_HAVE_IRQCHIP ? "has" : "lacks");
	}
	return 0;
}

static int check_devices(const struct state_vm *s, char *err, size_t errlen)
{
	const struct vm_devices_state *d = &s->devices;

	if (d->have & ~VM_DEVICES_HAVE_ALL)
		return kvmlu_err(err, errlen, -EINVAL, "state: unknown devices 0x%x", d->have);
	if ((d->have & VM_DEVICES_HAVE_CLOCK) &&
	    (d->clock.flags & ~(KVM_CLOCK_TSC_STABLE | KVM_CLOCK_REALTIME | KVM_CLOCK_HOST_TSC)))
		return kvmlu_err(err, errlen, -EINVAL, "state: kvmclock flags 0x%x unknown",
				    d->clock.flags);
	return 0;
}

/*
 * The virtio devices: in slot order, each type's after the types before
 * it (disks, then NICs: vm_device_types), at the layout's window and GSI
 * (vm_virtio.h); then each one's values, by its type.
 */
static int check_virtio_devices(const struct state_vm *s, char *err, size_t errlen)
{
	const void *before[STATE_MAX_DEVICES];
	unsigned int rank = 0;
	char why[256];

	if (s->nr_devs > VM_VIRTIO_MAX_DEVICES || s->nr_devs > STATE_MAX_DEVICES)
		return kvmlu_err(err, errlen, -EINVAL, "state: %u virtio devices, at most %u",
				 s->nr_devs, VM_VIRTIO_MAX_DEVICES);
	for (uint32_t slot = 0; slot < s->nr_devs; slot++) {
		const struct vm_device_type *t = s->devs[slot].type;
		const void *st = s->devs[slot].state.bytes;
		struct vm_virtio_slot want = vm_virtio_slot(slot);
		uint32_t have_slot = *vm_device_state_slot(t, (void *)st);
		uint64_t base = *vm_device_state_base(t, (void *)st);
		uint32_t gsi = *vm_device_state_gsi(t, (void *)st);
		uint32_t i = 0;

		while (vm_device_types[rank] && vm_device_types[rank] != t)
			rank++;
		if (!vm_device_types[rank])
			return kvmlu_err(err, errlen, -EINVAL,
					 "state: device %u is of a type out of slot order", slot);
		for (uint32_t k = 0; k < slot; k++)
			if (s->devs[k].type == t)
				before[i++] = s->devs[k].state.bytes;
		if (i >= t->max)
			return kvmlu_err(err, errlen, -EINVAL, "state: %u %s, at most %u", i + 1,
					 t->whats, t->max);
		if (have_slot != slot || base != want.base || gsi != want.gsi)
			return kvmlu_err(err, errlen, -EINVAL,
					 "state: %s %u is slot %u at 0x%llx GSI %u, expected slot %u at 0x%llx GSI %u",
					 t->what, i, have_slot, (unsigned long long)base,
					 gsi, slot, (unsigned long long)want.base, want.gsi);
		if (t->validate(st, before, i, why, sizeof(why)))
			return kvmlu_err(err, errlen, -EINVAL, "state: %s@%llx: %s",
					 t->kind, (unsigned long long)base, why);
	}
	return 0;
}

int state_validate(const struct state_vm *s, uint32_t expect_vcpus,
		   char *err, size_t errlen)
{
	int ret;

	if (s->format_major < STATE_FORMAT_MAJOR || s->format_major > STATE_FORMAT_MAJOR_MAX)
		return kvmlu_err(err, errlen, -EPROTONOSUPPORT,
				    "state: format %u.%u not understood: this kvmlu reads %d.x and %d.x",
				    s->format_major, s->format_minor, STATE_FORMAT_MAJOR,
				    STATE_FORMAT_MAJOR_MAX);
	/* What a 1.x reader would drop must not hide in a 1.x state. */
	if (state_vm_nr_devices(s) && s->format_major < STATE_FORMAT_MAJOR_VIRTIO)
		return kvmlu_err(err, errlen, -EINVAL,
				 "state: format %u.%u has virtio devices, which need format %d.x",
				 s->format_major, s->format_minor, STATE_FORMAT_MAJOR_VIRTIO);
	ret = check_identity(s, err, errlen);
	if (!ret)
		ret = check_memory(s, err, errlen);
	if (!ret)
		ret = check_chunk_digests(s, err, errlen);
	if (!ret)
		ret = check_devices(s, err, errlen);
	if (!ret)
		ret = check_virtio_devices(s, err, errlen);
	if (!ret)
		ret = check_cpus(s, expect_vcpus, err, errlen);
	return ret;
}

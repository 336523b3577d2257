/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The values of tests/state-corpus/good/two_disks_two_nics_from_2_1.dtb:
 * a state with every kind of node the format has (two vCPUs, memory
 * with chunk digests, irqchip, PIT, kvmclock, UART, two virtio-blk disks
 * and two virtio-net NICs, format 2.1). That file was written by
 * state_fdt_write() of the code before the device interface, from
 * exactly this function; test_state_fixture.c reads it with today's
 * code and compares every field, then writes it again and compares the
 * bytes. Never change a value here without writing the file again with
 * an old build: the point is that the file is not of this code.
 */
#ifndef KVMLU_TESTS_STATE_FIXTURE_H
#define KVMLU_TESTS_STATE_FIXTURE_H

#include <string.h>

#include "guestmem/digest_table.h"
#include "tests/unit/vmm/state_devices.h"
#include "vmm/state/state_vm.h"

static inline void fixture_transport(struct virtio_mmio_state *t, uint32_t device_id,
				     uint64_t features, uint32_t nr_queues, uint64_t ring)
{
	t->device_id = device_id;
	t->device_features = features;
	t->driver_features = features;
	t->device_features_sel = 1;
	t->driver_features_sel = 1;
	t->queue_sel = nr_queues - 1;
	t->status = 1 | 2 | 4 | 8;
	t->interrupt_status = 1;
	t->config_generation = 3;
	t->nr_queues = nr_queues;
	for (uint32_t q = 0; q < nr_queues; q++)
		t->q[q] = (struct virtio_mmio_queue_state){
			.present = true, .size = 128u << q, .ready = true,
			.desc = ring + q * 0x4000, .avail = ring + q * 0x4000 + 0x1000,
			.used = ring + q * 0x4000 + 0x2000,
			.last_avail = 0xfff0 + q, .used_idx = 0xfff0 + q,
		};
}

static inline void fixture_disk(struct virtio_blk_state *d, uint32_t slot, const char *path,
				const char *id, int readonly)
{
	uint64_t cap = 4096 + slot;
	uint32_t seg_max = 254, blk_size = 512;

	memset(d, 0, sizeof(*d));
	d->slot = slot;
	d->base = 0xd0000000ull + slot * 0x1000ull;
	d->gsi = 16 + slot;
	strcpy(d->ident.path, path);
	d->ident.dev = 0x803 + slot;
	d->ident.ino = 131075 + slot;
	d->ident.size = cap * 512;
	d->readonly = readonly;
	strcpy(d->id, id);
	fixture_transport(&d->t, 2, (1ULL << 32) | (1u << 9) | (1u << 6) | (1u << 2) |
			  (readonly ? 1u << 5 : 0), 1, 0x7f000000ull + slot * 0x100000ull);
	d->t.config_len = 24;
	memcpy(d->t.config, &cap, 8);
	memcpy(d->t.config + 12, &seg_max, 4);
	memcpy(d->t.config + 20, &blk_size, 4);
}

static inline void fixture_net(struct virtio_net_state *d, uint32_t slot, const char *tap,
			       const char *bridge)
{
	uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, (uint8_t)(0x50 + slot) };
	uint16_t link_up = 1;

	memset(d, 0, sizeof(*d));
	d->slot = slot;
	d->base = 0xd0000000ull + slot * 0x1000ull;
	d->gsi = 16 + slot;
	strcpy(d->tap, tap);
	strcpy(d->bridge, bridge);
	memcpy(d->mac, mac, 6);
	fixture_transport(&d->t, 1, (1ULL << 32) | (1u << 16) | (1u << 5), 2,
			  0x7e000000ull + slot * 0x100000ull);
	d->t.config_len = 8;
	memcpy(d->t.config, mac, 6);
	memcpy(d->t.config + 6, &link_up, 2);
}

/* Returns 0, or -1 if the state could not be made. */
static inline int fixture_make_state(struct state_vm *s)
{
	struct guestmem layout = { .nr = 2 };

	if (state_vm_init(s, 2))
		return -1;
	strcpy(s->name, "fixture-vm");
	strcpy(s->uuid, "3f2504e0-4f89-41d3-9a0c-0305e82c3301");
	strcpy(s->kvmlu_version, "0.1.0");
	s->backend = STATE_BACKEND_MEMFD;
	s->nr_regions = 2;
	s->regions[0] = (struct state_vm_region){ .gpa = 0, .size = 0x400000,
						  .file_offset = 0, .token = 0, .slot = 0 };
	s->regions[1] = (struct state_vm_region){ .gpa = 0x100000000ull, .size = 0x200000,
						  .file_offset = 0x400000, .token = 1, .slot = 1 };
	for (uint32_t i = 0; i < 2; i++) {
		layout.r[i].gpa = s->regions[i].gpa;
		layout.r[i].size = s->regions[i].size;
	}
	s->nr_chunk_digests = guestmem_digest_chunks(&layout);
	s->chunk_digests = calloc(s->nr_chunk_digests, sizeof(*s->chunk_digests));
	if (!s->chunk_digests)
		return -1;
	for (uint64_t i = 0; i < s->nr_chunk_digests; i++)
		s->chunk_digests[i] = (struct guestmem_chunk_digest){
			.hi = 0x1111111111111111ull * (i + 1), .lo = 0x0123456789abcdefull ^ i };
	s->has_checksum = true;
	if (guestmem_digest_sum(&layout, s->chunk_digests, s->nr_chunk_digests,
				&s->checksum_hi, &s->checksum_lo))
		return -1;
	for (uint32_t i = 0; i < 2; i++) {
		struct cpu_state *c = &s->cpus[i];

		c->index = i;
		c->have = CPU_STATE_HAVE_ALL;
		c->regs.rip = 0x100000 + i;
		c->regs.rsp = 0x8000 - i * 0x100;
		c->regs.rflags = 0x202;
		c->regs.rax = 0xaaaa0000 + i;
		c->sregs2.cr0 = 0x80050033;
		c->sregs2.cr4 = 0x3406e0;
		c->sregs2.efer = 0xd01;
		c->xsave_size = 4096;
		memset(c->xsave, 0x5a + i, 576);
		c->xcrs.nr_xcrs = 1;
		c->xcrs.xcrs[0].value = 7;
		c->lapic.regs[0x20] = (char)i;
		c->events.interrupt.nr = 0x30;
		c->mp_state.mp_state = i ? KVM_MP_STATE_HALTED : KVM_MP_STATE_RUNNABLE;
		c->debugregs.db[1] = 0x1000;
		c->debugregs.dr6 = 0xffff0ff0;
		c->debugregs.dr7 = 0x400;
		c->tsc_khz = 2596128;
		c->tsc_offset = (uint64_t)-123456789 - i;
		c->nr_msrs = 3;
		c->msrs[0] = (struct cpu_state_msr){ 0x10, 0x123456789 + i };
		c->msrs[1] = (struct cpu_state_msr){ 0xc0000082, 0xffffffff81000000ull };
		c->msrs[2] = (struct cpu_state_msr){ 0x6e0, 0 };
		c->nr_cpuid = 2;
		c->cpuid[0] = (struct kvm_cpuid_entry2){ .function = 0, .eax = 0xd,
							 .ebx = 0x68747541 };
		c->cpuid[1] = (struct kvm_cpuid_entry2){ .function = 1, .ecx = 1u << 24,
							 .edx = 0x178bfbff };
	}
	s->devices.have = VM_DEVICES_HAVE_ALL;
	s->devices.pic_master.imr = 0xf8;
	s->devices.pic_slave.imr = 0xff;
	s->devices.ioapic.base_address = 0xfec00000;
	s->devices.pit.channels[0].count = 0x10000;
	s->devices.clock.clock = 123456789;
	s->devices.clock.flags = KVM_CLOCK_TSC_STABLE;
	s->devices.clock.realtime = 1700000000000000001ull;
	s->devices.clock.host_tsc = 99999;
	s->devices.clock_wall_ns = 1700000000000000000ull;
	s->has_uart = true;
	s->uart.ier = 0x01;
	s->uart.iir = 0xc1;
	s->uart.lcr = 0x03;
	s->uart.mcr = 0x0b;
	s->uart.lsr = 0x60;
	s->uart.scr = 0x42;
	s->uart.dll = 1;
	fixture_disk(state_vm_add_device(s, &virtio_blk_type), 0, "/var/lib/kvmlu/fixture-root.raw", "root", 0);
	fixture_disk(state_vm_add_device(s, &virtio_blk_type), 1, "/var/lib/kvmlu/fixture-data.raw", "", 1);
	fixture_net(state_vm_add_device(s, &virtio_net_type), 2, "fx-net0", "br0");
	fixture_net(state_vm_add_device(s, &virtio_net_type), 3, "fx-net1", "");
	s->format_major = 2;
	s->format_minor = 1;
	return 0;
}

#endif /* KVMLU_TESTS_STATE_FIXTURE_H */

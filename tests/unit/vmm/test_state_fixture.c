// SPDX-License-Identifier: GPL-2.0
/*
 * The state FDT format across the device interface: a state written by
 * the code before it (tests/state-corpus/good/two_disks_two_nics_from_2_1.dtb,
 * from state_fixture.h) must be read by this code with every value the
 * same, and this code must write the very same bytes from it, so a
 * kvmlu-vmm of before reads what this one writes (a live upgrade or a
 * host update in either direction). And a VM on virtio-pci
 * (tests/state-corpus/good/one_disk_virtio_pci.dtb, captured from a real
 * VM by test_vm_virtio_pci): format 2.2, its function's state as the
 * driver left it, written again byte for byte. Run from the top of the
 * tree.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/vmm/state_fixture.h"
#include "vmm/devices/virtio_blk_device.h"
#include "vmm/devices/virtio_blk_state.h"
#include "vmm/state/state_fdt.h"

#define FIXTURE "tests/state-corpus/good/two_disks_two_nics_from_2_1.dtb"

static char err[512];

static void *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot open %s (run from the top of the tree)", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static void same_transport(const struct virtio_mmio_state *a, const struct virtio_mmio_state *b)
{
	assert_int_equal(a->device_id, b->device_id);
	assert_int_equal(a->device_features, b->device_features);
	assert_int_equal(a->driver_features, b->driver_features);
	assert_int_equal(a->device_features_sel, b->device_features_sel);
	assert_int_equal(a->driver_features_sel, b->driver_features_sel);
	assert_int_equal(a->queue_sel, b->queue_sel);
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->interrupt_status, b->interrupt_status);
	assert_int_equal(a->config_generation, b->config_generation);
	assert_int_equal(a->broken, b->broken);
	assert_int_equal(a->nr_queues, b->nr_queues);
	assert_int_equal(a->config_len, b->config_len);
	assert_memory_equal(a->config, b->config, a->config_len);
	for (uint32_t q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++) {
		assert_int_equal(a->q[q].present, b->q[q].present);
		assert_int_equal(a->q[q].size, b->q[q].size);
		assert_int_equal(a->q[q].ready, b->q[q].ready);
		assert_int_equal(a->q[q].desc, b->q[q].desc);
		assert_int_equal(a->q[q].avail, b->q[q].avail);
		assert_int_equal(a->q[q].used, b->q[q].used);
		assert_int_equal(a->q[q].last_avail, b->q[q].last_avail);
		assert_int_equal(a->q[q].used_idx, b->q[q].used_idx);
	}
}

static void same_cpu(const struct cpu_state *a, const struct cpu_state *b)
{
	assert_int_equal(a->index, b->index);
	assert_int_equal(a->have, b->have);
	assert_memory_equal(&a->regs, &b->regs, sizeof(a->regs));
	assert_memory_equal(&a->sregs2, &b->sregs2, sizeof(a->sregs2));
	assert_int_equal(a->xsave_size, b->xsave_size);
	assert_memory_equal(a->xsave, b->xsave, a->xsave_size);
	assert_memory_equal(&a->xcrs, &b->xcrs, sizeof(a->xcrs));
	assert_memory_equal(&a->lapic, &b->lapic, sizeof(a->lapic));
	assert_memory_equal(&a->events, &b->events, sizeof(a->events));
	assert_int_equal(a->mp_state.mp_state, b->mp_state.mp_state);
	assert_memory_equal(a->debugregs.db, b->debugregs.db, sizeof(a->debugregs.db));
	assert_int_equal(a->debugregs.dr6, b->debugregs.dr6);
	assert_int_equal(a->debugregs.dr7, b->debugregs.dr7);
	assert_int_equal(a->tsc_khz, b->tsc_khz);
	assert_int_equal(a->tsc_offset, b->tsc_offset);
	assert_int_equal(a->nr_msrs, b->nr_msrs);
	assert_memory_equal(a->msrs, b->msrs, a->nr_msrs * sizeof(a->msrs[0]));
	assert_int_equal(a->nr_cpuid, b->nr_cpuid);
	assert_memory_equal(a->cpuid, b->cpuid, a->nr_cpuid * sizeof(a->cpuid[0]));
}

/* Every field the format carries, as written by the fixture's function. */
static void same_state(const struct state_vm *a, const struct state_vm *b)
{
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->uuid, b->uuid);
	assert_string_equal(a->kvmlu_version, b->kvmlu_version);
	assert_int_equal(a->format_major, b->format_major);
	assert_int_equal(a->format_minor, b->format_minor);
	assert_int_equal(a->backend, b->backend);
	assert_int_equal(a->nr_regions, b->nr_regions);
	assert_memory_equal(a->regions, b->regions, a->nr_regions * sizeof(a->regions[0]));
	assert_int_equal(a->has_checksum, b->has_checksum);
	assert_int_equal(a->checksum_hi, b->checksum_hi);
	assert_int_equal(a->checksum_lo, b->checksum_lo);
	assert_int_equal(a->nr_chunk_digests, b->nr_chunk_digests);
	assert_memory_equal(a->chunk_digests, b->chunk_digests,
			    a->nr_chunk_digests * sizeof(a->chunk_digests[0]));
	assert_int_equal(a->nr_vcpus, b->nr_vcpus);
	for (uint32_t i = 0; i < a->nr_vcpus; i++)
		same_cpu(&a->cpus[i], &b->cpus[i]);
	assert_int_equal(a->devices.have, b->devices.have);
	assert_memory_equal(&a->devices.pic_master, &b->devices.pic_master,
			    sizeof(a->devices.pic_master));
	assert_memory_equal(&a->devices.pic_slave, &b->devices.pic_slave,
			    sizeof(a->devices.pic_slave));
	assert_memory_equal(&a->devices.ioapic, &b->devices.ioapic, sizeof(a->devices.ioapic));
	assert_memory_equal(&a->devices.pit, &b->devices.pit, sizeof(a->devices.pit));
	assert_int_equal(a->devices.clock.clock, b->devices.clock.clock);
	assert_int_equal(a->devices.clock.flags, b->devices.clock.flags);
	assert_int_equal(a->devices.clock.realtime, b->devices.clock.realtime);
	assert_int_equal(a->devices.clock.host_tsc, b->devices.clock.host_tsc);
	assert_int_equal(a->devices.clock_wall_ns, b->devices.clock_wall_ns);
	assert_int_equal(a->has_uart, b->has_uart);
	assert_memory_equal(&a->uart, &b->uart, sizeof(a->uart));
	assert_int_equal(state_vm_count(a, &virtio_blk_type), state_vm_count(b, &virtio_blk_type));
	for (uint32_t i = 0; i < state_vm_count(a, &virtio_blk_type); i++) {
		const struct virtio_blk_state *x = DISK(a, i), *y = DISK(b, i);

		assert_int_equal(x->slot, y->slot);
		assert_int_equal(x->base, y->base);
		assert_int_equal(x->gsi, y->gsi);
		assert_string_equal(x->ident.path, y->ident.path);
		assert_int_equal(x->ident.dev, y->ident.dev);
		assert_int_equal(x->ident.ino, y->ident.ino);
		assert_int_equal(x->ident.size, y->ident.size);
		assert_int_equal(x->readonly, y->readonly);
		assert_string_equal(x->id, y->id);
		same_transport(&x->t, &y->t);
	}
	assert_int_equal(state_vm_count(a, &virtio_net_type), state_vm_count(b, &virtio_net_type));
	for (uint32_t i = 0; i < state_vm_count(a, &virtio_net_type); i++) {
		const struct virtio_net_state *x = NET(a, i), *y = NET(b, i);

		assert_int_equal(x->slot, y->slot);
		assert_int_equal(x->base, y->base);
		assert_int_equal(x->gsi, y->gsi);
		assert_string_equal(x->tap, y->tap);
		assert_string_equal(x->bridge, y->bridge);
		assert_memory_equal(x->mac, y->mac, 6);
		same_transport(&x->t, &y->t);
	}
}

static void test_state_fixture_from_before_the_device_interface_reads_the_same(void **state)
{
	struct state_vm want, got;
	size_t size;
	void *blob = slurp(FIXTURE, &size);

	(void)state;
	assert_int_equal(fixture_make_state(&want), 0);
	if (state_fdt_load(blob, size, 2, &got, err, sizeof(err)))
		fail_msg("load %s: %s", FIXTURE, err);
	/* Not vacuous: the fixture has every kind of node. */
	assert_int_equal(got.format_major, 2);
	assert_int_equal(got.format_minor, 1);
	assert_int_equal(state_vm_count(&got, &virtio_blk_type), 2);
	assert_int_equal(state_vm_count(&got, &virtio_net_type), 2);
	assert_true(DISK(&got, 1)->readonly);
	assert_string_equal(NET(&got, 1)->tap, "fx-net1");
	assert_int_equal(NET(&got, 1)->slot, 3);
	same_state(&want, &got);
	state_vm_free(&want);
	state_vm_free(&got);
	free(blob);
}

static void test_state_fixture_is_written_again_byte_for_byte(void **state)
{
	struct state_vm s, made;
	void *old, *blob;
	size_t old_size, size;

	(void)state;
	old = slurp(FIXTURE, &old_size);
	/* From what was read, and from the fixture's values: both the same bytes. */
	if (state_fdt_load(old, old_size, 2, &s, err, sizeof(err)))
		fail_msg("load %s: %s", FIXTURE, err);
	assert_int_equal(state_fdt_write(&s, &blob, &size, err, sizeof(err)), 0);
	assert_int_equal(size, old_size);
	assert_memory_equal(blob, old, size);
	free(blob);
	assert_int_equal(fixture_make_state(&made), 0);
	assert_int_equal(state_fdt_write(&made, &blob, &size, err, sizeof(err)), 0);
	assert_int_equal(size, old_size);
	assert_memory_equal(blob, old, size);
	free(blob);
	state_vm_free(&made);
	state_vm_free(&s);
	free(old);
}

#define FIXTURE_PCI "tests/state-corpus/good/one_disk_virtio_pci.dtb"

static void test_state_fixture_of_a_virtio_pci_vm(void **state)
{
	const struct virtio_blk_state *d;
	struct state_vm s;
	void *old, *blob;
	size_t old_size, size;

	(void)state;
	old = slurp(FIXTURE_PCI, &old_size);
	if (state_fdt_load(old, old_size, 1, &s, err, sizeof(err)))
		fail_msg("load %s: %s", FIXTURE_PCI, err);
	assert_int_equal(s.format_major, 2);
	assert_int_equal(s.format_minor, 2);
	assert_int_equal(s.virtio_transport, STATE_VIRTIO_TRANSPORT_PCI);
	assert_int_equal(s.nr_devs, 1);
	d = state_vm_device(&s, &virtio_blk_type, 0);
	assert_true(d->t.pci.present);
	assert_int_equal(d->t.pci.command, 6);		/* memory, bus master */
	assert_int_equal(d->t.pci.bar0_lo, 0xd0000004);
	assert_int_equal(d->t.pci.msix_ctrl, 0x8000);	/* MSI-X enabled */
	assert_int_equal(d->t.pci.nr_vectors, 2);
	assert_int_equal(d->t.pci.msix[0][0], 0xfee00000);
	assert_int_equal(d->t.pci.msix[0][2], 0x40);
	assert_int_equal(d->t.pci.msix[1][3], 1);	/* vector 1 still masked */
	assert_int_equal(d->t.pci.config_vector, 1);
	assert_int_equal(d->t.pci.queue_vector[0], 0);
	assert_int_equal(d->t.pci.queue_vector[1], 0xffff);
	assert_int_equal(d->t.status, 15);
	assert_int_equal(state_fdt_write(&s, &blob, &size, err, sizeof(err)), 0);
	assert_int_equal(size, old_size);
	assert_memory_equal(blob, old, size);
	free(blob);
	state_vm_free(&s);
	free(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_fixture_of_a_virtio_pci_vm),
		cmocka_unit_test(test_state_fixture_from_before_the_device_interface_reads_the_same),
		cmocka_unit_test(test_state_fixture_is_written_again_byte_for_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

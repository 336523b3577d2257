// SPDX-License-Identifier: GPL-2.0
/*
 * The state FDT reader and validator against good and hostile input,
 * without KVM: a synthetic two-vCPU state is written, then damaged one
 * way per test (truncation, corruption, wrong sizes, missing nodes and
 * properties, out-of-range values, overlapping or unaligned memory, vCPU
 * count mismatches, a newer major version, foreign compatibles). Each
 * must be refused with an error that names the problem, and leave the
 * output state empty. A newer minor version with extra properties must
 * still be read.
 *
 * With KVMLU_STATE_CORPUS_OUT=DIR set, every bad case is also written to
 * DIR/<case>.dtb with the expected error text in DIR/<case>.expect: that
 * is how tests/state-corpus/bad/ was made (test_state_corpus.c replays it);
 * the good state goes to DIR/../good/two_vcpus.dtb.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_line.h"
#include "tests/unit/vmm/state_devices.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_vm.h"

static char err[512];

/* 4 GiB in 2 MiB chunks, digests made up, the checksum they sum to. */
static void make_chunk_digests(struct state_vm *s)
{
	struct guestmem layout = { .nr = s->nr_regions };
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (uint32_t i = 0; i < s->nr_regions; i++) {
		layout.r[i].gpa = s->regions[i].gpa;
		layout.r[i].size = s->regions[i].size;
	}
	s->nr_chunk_digests = guestmem_digest_chunks(&layout);
	assert_int_equal(s->nr_chunk_digests, 2048);
	s->chunk_digests = calloc(s->nr_chunk_digests, sizeof(*s->chunk_digests));
	assert_non_null(s->chunk_digests);
	for (uint64_t i = 0; i < s->nr_chunk_digests; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s->chunk_digests[i] = (struct guestmem_chunk_digest){ .hi = x, .lo = ~x + i };
	}
	assert_int_equal(guestmem_digest_sum(&layout, s->chunk_digests, s->nr_chunk_digests,
					     &s->checksum_hi, &s->checksum_lo), 0);
}

/* A virtio-blk disk in slot 0 as a Linux driver leaves it running. */
static void make_disk(struct virtio_blk_state *d)
{
	struct virtio_mmio_state *t = &d->t;
	uint64_t cap = 2048;

	memset(d, 0, sizeof(*d));
	d->slot = 0;
	d->base = 0xd0000000;
	d->gsi = 16;
	strcpy(d->ident.path, "/var/lib/kvmlu/vm1-root.raw");
	d->ident.dev = 0x803;
	d->ident.ino = 131075;
	d->ident.size = cap * 512;
	strcpy(d->id, "root");
	t->device_id = 2;
	t->device_features = (1ULL << 32) | (1u << 9) | (1u << 2);
	t->driver_features = (1ULL << 32) | (1u << 9);
	t->status = 1 | 2 | 4 | 8;
	t->interrupt_status = 1;
	t->queue_sel = 0;
	t->nr_queues = 1;
	t->q[0] = (struct virtio_mmio_queue_state){
		.present = true, .size = 256, .ready = true, .desc = 0x7f000000,
		.avail = 0x7f001000, .used = 0x7f002000, .last_avail = 0xfff0, .used_idx = 0xfff0,
	};
	t->config_len = 16;
	memcpy(t->config, &cap, 8);
}

/* A plausible state: values KVM would give, nothing needs /dev/kvm. */
static void make_state(struct state_vm *s)
{
	assert_int_equal(state_vm_init(s, 2), 0);
	strcpy(s->name, "vm1");
	strcpy(s->uuid, "0f1e2d3c-4b5a-4968-8776-655443322110");
	strcpy(s->kvmlu_version, "0.1.0");
	s->backend = STATE_BACKEND_MEMFD;
	s->nr_regions = 2;
	s->regions[0] = (struct state_vm_region){ .gpa = 0, .size = 0xc0000000ull,
						  .token = 0, .slot = 0 };
	s->regions[1] = (struct state_vm_region){ .gpa = 0x100000000ull, .size = 0x40000000ull,
						  .token = 1, .slot = 1 };
	s->has_checksum = true;
	make_chunk_digests(s);
	for (uint32_t i = 0; i < 2; i++) {
		struct cpu_state *c = &s->cpus[i];

		c->index = i;
		c->have = CPU_STATE_HAVE_ALL;
		c->regs.rip = 0x100000 + i;
		c->regs.rflags = 0x202;
		c->regs.rax = 0xaaaa0000 + i;
		c->sregs2.cr0 = 0x80050033;
		c->sregs2.efer = 0xd01;
		c->xsave_size = 4096;
		memset(c->xsave, 0x5a, 512);
		c->xcrs.nr_xcrs = 1;
		c->xcrs.xcrs[0].value = 7;
		c->lapic.regs[0x20] = (char)i;
		c->mp_state.mp_state = KVM_MP_STATE_RUNNABLE;
		c->debugregs.dr6 = 0xffff0ff0;
		c->debugregs.dr7 = 0x400;
		c->tsc_khz = 2596128;
		c->tsc_offset = (uint64_t)-123456789;
		c->nr_msrs = 3;
		c->msrs[0] = (struct cpu_state_msr){ 0x10, 0x123456789 };
		c->msrs[1] = (struct cpu_state_msr){ 0xc0000082, 0xffffffff81000000ull };
		c->msrs[2] = (struct cpu_state_msr){ 0x6e0, 0 };
		c->nr_cpuid = 2;
		c->cpuid[0] = (struct kvm_cpuid_entry2){ .function = 0, .eax = 0xd,
							 .ebx = 0x68747541 };
		c->cpuid[1] = (struct kvm_cpuid_entry2){ .function = 1, .ecx = 1u << 24 };
	}
	s->devices.have = VM_DEVICES_HAVE_ALL;
	s->devices.pic_master.imr = 0xf8;
	s->devices.ioapic.base_address = 0xfec00000;
	s->devices.pit.channels[0].count = 0x10000;
	s->devices.clock.clock = 123456789;
	s->devices.clock_wall_ns = 1700000000000000000ull;
	s->has_uart = true;
	s->uart.lcr = 0x03;
	s->uart.dll = 1;
	make_disk(state_vm_add_device(s, &virtio_blk_type));
}

/* The good state's FDT, opened with room to spare for edits. */
static void *good_fdt(size_t *size)
{
	struct state_vm s;
	void *blob, *buf;
	size_t n;

	make_state(&s);
	assert_int_equal(state_fdt_write(&s, &blob, &n, err, sizeof(err)), 0);
	state_vm_free(&s);
	buf = malloc(n + 4096);
	assert_non_null(buf);
	assert_int_equal(fdt_open_into(blob, buf, (int)n + 4096), 0);
	free(blob);
	*size = n + 4096;
	return buf;
}

static int node(void *fdt, const char *path)
{
	int off = fdt_path_offset(fdt, path);

	assert_true(off >= 0);
	return off;
}

static void set_u32(void *fdt, const char *path, const char *prop, uint32_t v)
{
	assert_int_equal(fdt_setprop_u32(fdt, node(fdt, path), prop, v), 0);
}

static void set_u64x2(void *fdt, const char *path, const char *prop, uint64_t a, uint64_t b)
{
	fdt64_t v[2] = { cpu_to_fdt64(a), cpu_to_fdt64(b) };

	assert_int_equal(fdt_setprop(fdt, node(fdt, path), prop, v, sizeof(v)), 0);
}

static void save_case(const char *name, const void *blob, size_t size, const char *expect)
{
	const char *dir = getenv("KVMLU_STATE_CORPUS_OUT");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.dtb", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(blob, 1, size, f), size);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s.expect", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", expect);
	fclose(f);
}

/* load must refuse and say `expect`; the output state must stay empty. */
static void expect_refused(const char *name, const void *blob, size_t size,
			   uint32_t vcpus, const char *expect)
{
	struct state_vm s;

	memset(&s, 0xa5, sizeof(s));
	err[0] = '\0';
	if (state_fdt_load(blob, size, vcpus, &s, err, sizeof(err)) == 0)
		fail_msg("%s: accepted", name);
	if (!strstr(err, expect))
		fail_msg("%s: error \"%s\" does not say \"%s\"", name, err, expect);
	assert_null(s.cpus);
	assert_int_equal(s.nr_vcpus, 0);
	/* The corpus replays without a vCPU count: only states bad by themselves. */
	if (vcpus == 0)
		save_case(name, blob, size, expect);
}

#define BAD(fdt, expect) do {							\
	fdt_pack(fdt);								\
	expect_refused(__func__ + 23, fdt, fdt_totalsize(fdt), 0, expect);	\
	free(fdt);								\
} while (0)

static void test_state_fdt_roundtrip_keeps_every_field(void **state)
{
	struct state_vm a, b;
	void *blob;
	size_t n;

	(void)state;
	make_state(&a);
	assert_int_equal(state_fdt_write(&a, &blob, &n, err, sizeof(err)), 0);
	if (state_fdt_load(blob, n, 2, &b, err, sizeof(err)))
		fail_msg("load: %s", err);
	save_case("../good/two_vcpus", blob, n, "");
	assert_string_equal(a.name, b.name);
	assert_string_equal(a.uuid, b.uuid);
	assert_string_equal(a.kvmlu_version, b.kvmlu_version);
	assert_int_equal(b.nr_regions, 2);
	assert_memory_equal(a.regions, b.regions, sizeof(a.regions[0]) * 2);
	assert_true(b.has_checksum);
	assert_int_equal(a.checksum_hi, b.checksum_hi);
	assert_int_equal(a.checksum_lo, b.checksum_lo);
	assert_int_equal(b.nr_chunk_digests, 2048);
	assert_memory_equal(a.chunk_digests, b.chunk_digests,
			    sizeof(a.chunk_digests[0]) * a.nr_chunk_digests);
	/* With a virtio disk: 2.0, which a 1.x reader refuses instead of dropping the disk. */
	assert_int_equal(b.format_major, 2);
	assert_int_equal(b.format_minor, 0);
	assert_memory_equal(&a.devices, &b.devices, sizeof(a.devices));
	assert_memory_equal(&a.uart, &b.uart, sizeof(a.uart));
	/* cpu_state has padding only after fixed-size members: compare all of it. */
	for (int i = 0; i < 2; i++)
		assert_memory_equal(&a.cpus[i], &b.cpus[i], sizeof(a.cpus[i]));
	assert_int_equal(state_vm_count(&b, &virtio_blk_type), 1);
	{
		const struct virtio_blk_state *x = DISK(&a, 0), *y = DISK(&b, 0);

		assert_int_equal(y->slot, x->slot);
		assert_int_equal(y->base, x->base);
		assert_int_equal(y->gsi, x->gsi);
		assert_string_equal(y->ident.path, x->ident.path);
		assert_int_equal(y->ident.dev, x->ident.dev);
		assert_int_equal(y->ident.ino, x->ident.ino);
		assert_int_equal(y->ident.size, x->ident.size);
		assert_string_equal(y->id, x->id);
		assert_int_equal(y->readonly, x->readonly);
		assert_int_equal(y->t.device_features, x->t.device_features);
		assert_int_equal(y->t.driver_features, x->t.driver_features);
		assert_int_equal(y->t.status, x->t.status);
		assert_int_equal(y->t.interrupt_status, x->t.interrupt_status);
		assert_int_equal(y->t.nr_queues, 1);
		assert_int_equal(y->t.config_len, 16);
		assert_memory_equal(y->t.config, x->t.config, 16);
		assert_memory_equal(&y->t.q[0], &x->t.q[0], sizeof(x->t.q[0]));
	}
	free(blob);
	state_vm_free(&a);
	state_vm_free(&b);
}

static void test_state_fdt_reads_newer_minor_with_unknown_props(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	struct state_vm s;
	fdt32_t fmt[2] = { cpu_to_fdt32(2), cpu_to_fdt32(7) };

	(void)state;
	assert_int_equal(fdt_setprop(fdt, 0, "kvmlu,format", fmt, sizeof(fmt)), 0);
	set_u32(fdt, "/cpus/cpu@1", "some-future-thing", 42);
	assert_true(fdt_add_subnode(fdt, node(fdt, "/devices"), "future-device") >= 0);
	if (state_fdt_load(fdt, n, 2, &s, err, sizeof(err)))
		fail_msg("newer minor refused: %s", err);
	assert_int_equal(s.format_minor, 7);
	state_vm_free(&s);
	free(fdt);
}

static void test_state_fdt_rejects_truncated_fdt(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	fdt_pack(fdt);
	expect_refused("truncated_fdt", fdt, fdt_totalsize(fdt) / 2, 0, "truncated");
	expect_refused("truncated_header", fdt, 20, 0, "less than a header");
	free(fdt);
}

static void test_state_fdt_rejects_corrupted_fdt(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	uint8_t *p = fdt;

	(void)state;
	fdt_pack(fdt);
	/* A property header pointing past the strings block. */
	memset(p + fdt_off_dt_struct(fdt) + 12, 0xff, 8);
	expect_refused("corrupted_struct", fdt, fdt_totalsize(fdt), 0, "corrupted");
	memcpy(p, "\x00\x00\x00\x00", 4);
	expect_refused("bad_magic", fdt, fdt_totalsize(fdt), 0, "not an FDT");
	free(fdt);
}

static void test_state_fdt_rejects_wrong_property_size(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	char junk[140] = { 0 };

	(void)state;
	assert_int_equal(fdt_setprop(fdt, node(fdt, "/cpus/cpu@1"), "regs", junk, 140), 0);
	BAD(fdt, "/cpus/cpu@1: property \"regs\" is 140 bytes, expected 144");
}

static void test_state_fdt_rejects_ragged_msr_list(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	char junk[13] = { 0 };

	(void)state;
	assert_int_equal(fdt_setprop(fdt, node(fdt, "/cpus/cpu@0"), "msrs", junk, 13), 0);
	BAD(fdt, "\"msrs\" is 13 bytes, not a multiple of 12");
}

static void test_state_fdt_rejects_huge_xsave(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	void *big = calloc(1, 20000);
	void *buf = malloc(n + 30000);

	(void)state;
	assert_int_equal(fdt_open_into(fdt, buf, (int)n + 30000), 0);
	free(fdt);
	fdt = buf;
	assert_int_equal(fdt_setprop(fdt, node(fdt, "/cpus/cpu@0"), "xsave", big, 20000), 0);
	free(big);
	BAD(fdt, "\"xsave\" is 20000 bytes");
}

static void test_state_fdt_rejects_missing_node(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_del_node(fdt, node(fdt, "/cpus")), 0);
	BAD(fdt, "missing node \"cpus\"");
}

static void test_state_fdt_rejects_missing_property(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_delprop(fdt, node(fdt, "/cpus/cpu@0"), "sregs2"), 0);
	BAD(fdt, "/cpus/cpu@0: missing property \"sregs2\"");
}

static void test_state_fdt_rejects_out_of_range_mp_state(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, "/cpus/cpu@1", "mp-state", 99);
	BAD(fdt, "vCPU 1 mp-state 99 unknown");
}

static void test_state_fdt_rejects_zero_tsc_khz(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, "/cpus/cpu@0", "tsc-khz", 0);
	BAD(fdt, "vCPU 0 tsc-khz 0 out of range");
}

static void test_state_fdt_rejects_uart_value_above_byte(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, "/devices/uart@3f8", "lcr", 0x1ff);
	BAD(fdt, "register lcr = 0x1ff is not a byte");
}

static void test_state_fdt_rejects_overlapping_regions(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	/* Region 1 now starts inside region 0. */
	set_u64x2(fdt, "/memory/region@100000000", "reg", 0xbff00000ull, 0x40000000ull);
	BAD(fdt, "memory regions 0 (gpa 0x0) and 1 (gpa 0xbff00000) overlap");
}

static void test_state_fdt_rejects_unaligned_region(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u64x2(fdt, "/memory/region@0", "reg", 0x800ull, 0x100000ull);
	BAD(fdt, "not 4 KiB aligned");
}

static void test_state_fdt_rejects_region_beyond_address_limit(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u64x2(fdt, "/memory/region@100000000", "reg", 0xfffffffffffff000ull, 0x2000ull);
	BAD(fdt, "beyond the 2^52 address limit");
}

static void test_state_fdt_rejects_vcpu_count_mismatch(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, "/cpus", "nr-vcpus", 3);
	BAD(fdt, "vCPU count mismatch: nr-vcpus 3 but 2 cpu nodes");
}

static void test_state_fdt_rejects_state_for_other_vcpu_count(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	fdt_pack(fdt);
	expect_refused("other_vcpu_count", fdt, fdt_totalsize(fdt), 4,
		       "vCPU count mismatch: state has 2, this VM 4");
	free(fdt);
}

static void test_state_fdt_rejects_duplicate_vcpu(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, "/cpus/cpu@1", "reg", 0);
	BAD(fdt, "vCPU index 0 appears twice");
}

static void test_state_fdt_rejects_future_major_version(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	fdt32_t fmt[2] = { cpu_to_fdt32(3), cpu_to_fdt32(0) };

	(void)state;
	assert_int_equal(fdt_setprop(fdt, 0, "kvmlu,format", fmt, sizeof(fmt)), 0);
	assert_int_equal(fdt_setprop_string(fdt, 0, "compatible", "kvmlu,vm-state-v3"), 0);
	BAD(fdt, "format 3.0 not understood: this kvmlu reads 1.x and 2.x");
}

static void test_state_fdt_rejects_unknown_node_compatible(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop_string(fdt, node(fdt, "/devices/kvmclock"), "compatible",
					    "kvmlu,kvmclock-v9"), 0);
	BAD(fdt, "compatible \"kvmlu,kvmclock-v9\" not understood");
}

static void test_state_fdt_rejects_bad_checksum_text(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop_string(fdt, node(fdt, "/memory"), "checksum",
					    "0123456789ABCDEF0123456789abcdef"), 0);
	BAD(fdt, "is not 32 lowercase hex digits");
}

static void test_state_fdt_reads_a_state_without_chunk_digests(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	struct state_vm s;

	(void)state;
	/* What a 1.0 writer made: a checksum and no table. */
	assert_int_equal(fdt_delprop(fdt, node(fdt, "/memory"), "chunk-digests"), 0);
	if (state_fdt_load(fdt, n, 2, &s, err, sizeof(err)))
		fail_msg("state without chunk-digests refused: %s", err);
	assert_true(s.has_checksum);
	assert_int_equal(s.nr_chunk_digests, 0);
	assert_null(s.chunk_digests);
	state_vm_free(&s);
	free(fdt);
}

static void test_state_fdt_rejects_ragged_chunk_digests(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	char junk[17] = { 0 };

	(void)state;
	assert_int_equal(fdt_setprop(fdt, node(fdt, "/memory"), "chunk-digests", junk,
				     sizeof(junk)), 0);
	BAD(fdt, "\"chunk-digests\" is 17 bytes, not 16 per chunk");
}

static void test_state_fdt_rejects_chunk_digests_of_other_memory(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	char three[48] = { 0 };

	(void)state;
	assert_int_equal(fdt_setprop(fdt, node(fdt, "/memory"), "chunk-digests", three,
				     sizeof(three)), 0);
	BAD(fdt, "3 memory chunk-digests, the regions have 2048 chunks of 2 MiB");
}

static void test_state_fdt_rejects_chunk_digests_that_are_not_the_checksum(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	int len = 0;
	char *d;

	(void)state;
	/* One bit of chunk 1000: the table no longer sums to the checksum. */
	d = fdt_getprop_w(fdt, node(fdt, "/memory"), "chunk-digests", &len);
	assert_non_null(d);
	assert_int_equal(len, 2048 * 16);
	d[1000 * 16 + 3] ^= 0x10;
	BAD(fdt, "memory chunk-digests sum to");
}

static void test_state_fdt_rejects_chunk_digests_without_checksum(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_delprop(fdt, node(fdt, "/memory"), "checksum"), 0);
	BAD(fdt, "chunk-digests without a checksum");
}

static void test_state_fdt_rejects_unknown_backend(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop_string(fdt, node(fdt, "/memory"), "backend", "hugetlbfs"), 0);
	BAD(fdt, "unknown backend \"hugetlbfs\"");
}

static void test_state_fdt_rejects_unterminated_name(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop(fdt, 0, "vm-name", "vm1", 3), 0);
	BAD(fdt, "property \"vm-name\" is not a single string");
}

static void test_state_fdt_rejects_name_with_slash(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop_string(fdt, 0, "vm-name", "../etc"), 0);
	BAD(fdt, "VM name \"../etc\" has character 0x2f");
}

static void test_state_fdt_rejects_duplicate_msr(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	fdt32_t m[6] = { cpu_to_fdt32(0x10), 0, 0, cpu_to_fdt32(0x10), 0, 0 };

	(void)state;
	assert_int_equal(fdt_setprop(fdt, node(fdt, "/cpus/cpu@0"), "msrs", m, sizeof(m)), 0);
	BAD(fdt, "vCPU 0 MSR 0x10 appears twice");
}

static void test_state_fdt_rejects_lapic_without_irqchip(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_del_node(fdt, node(fdt, "/devices/irqchip")), 0);
	BAD(fdt, "vCPU 0 has a LAPIC but the VM lacks an irqchip");
}

#define VBLK "/devices/virtio-blk@d0000000"

static void test_state_fdt_rejects_virtio_queue_index_out_of_range(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, VBLK "/queue@0", "reg", 5);
	BAD(fdt, "queue index 5 out of range (at most 2 queues)");
}

static void test_state_fdt_rejects_a_queue_the_device_lacks(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	int q;

	(void)state;
	q = fdt_add_subnode(fdt, node(fdt, VBLK), "queue@1");
	assert_true(q >= 0);
	assert_int_equal(fdt_setprop_string(fdt, q, "compatible", "kvmlu,virtqueue-split-v1"), 0);
	assert_int_equal(fdt_setprop_u32(fdt, q, "reg", 1), 0);
	assert_int_equal(fdt_setprop_u32(fdt, q, "size", 0), 0);
	assert_int_equal(fdt_setprop_u32(fdt, q, "ready", 0), 0);
	assert_int_equal(fdt_setprop_u64(fdt, q, "desc", 0), 0);
	assert_int_equal(fdt_setprop_u64(fdt, q, "driver", 0), 0);
	assert_int_equal(fdt_setprop_u64(fdt, q, "device", 0), 0);
	assert_int_equal(fdt_setprop_u32(fdt, q, "last-avail", 0), 0);
	assert_int_equal(fdt_setprop_u32(fdt, q, "used-idx", 0), 0);
	BAD(fdt, "virtio-blk@d0000000: 2 queues, the device has 1");
}

static void test_state_fdt_rejects_a_device_of_unknown_type(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	int d;

	(void)state;
	d = fdt_add_subnode(fdt, node(fdt, "/devices"), "virtio-gpu@d0001000");
	assert_true(d >= 0);
	assert_int_equal(fdt_setprop_string(fdt, d, "compatible", "kvmlu,virtio-gpu-v1"), 0);
	BAD(fdt, "device compatible \"kvmlu,virtio-gpu-v1\" not understood");
}

static void test_state_fdt_rejects_virtio_request_in_flight(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, VBLK "/queue@0", "used-idx", 0xffef);
	BAD(fdt, "last-avail 65520 != used-idx 65519: a request was in flight");
}

static void test_state_fdt_rejects_virtio_index_above_16_bits(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, VBLK "/queue@0", "last-avail", 0x10000);
	set_u32(fdt, VBLK "/queue@0", "used-idx", 0x10000);
	BAD(fdt, "queue 0: index out of range (last-avail 65536, used-idx 65536, 16-bit)");
}

static void test_state_fdt_rejects_virtio_queue_of_bad_size(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, VBLK "/queue@0", "size", 384);
	BAD(fdt, "queue 0: ready with size 384, not a power of two in 1..256");
}

static void test_state_fdt_rejects_virtio_features_not_offered(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop_u64(fdt, node(fdt, VBLK), "driver-features",
					 (1ULL << 32) | (1u << 28)), 0);
	BAD(fdt, "driver features 0x110000000 not offered (device 0x100000204)");
}

static void test_state_fdt_rejects_virtio_in_another_slot(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, VBLK, "gsi", 5);
	BAD(fdt, "disk 0 is slot 0 at 0xd0000000 GSI 5, expected slot 0 at 0xd0000000 GSI 16");
}

static void test_state_fdt_rejects_relative_disk_path(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop_string(fdt, node(fdt, VBLK), "disk-path", "root.raw"), 0);
	BAD(fdt, "disk path \"root.raw\" is not absolute");
}

static void test_state_fdt_rejects_virtio_driver_ok_without_features_ok(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);

	(void)state;
	set_u32(fdt, VBLK, "status", 1 | 2 | 4);
	BAD(fdt, "status DRIVER_OK without FEATURES_OK");
}

static void test_state_fdt_rejects_virtio_devices_in_a_1x_state(void **state)
{
	size_t n;
	void *fdt = good_fdt(&n);
	fdt32_t fmt[2] = { cpu_to_fdt32(1), cpu_to_fdt32(1) };

	(void)state;
	assert_int_equal(fdt_setprop(fdt, 0, "kvmlu,format", fmt, sizeof(fmt)), 0);
	assert_int_equal(fdt_setprop_string(fdt, 0, "compatible", "kvmlu,vm-state-v1"), 0);
	BAD(fdt, "format 1.1 has virtio devices, which need format 2.x");
}

static void test_state_fdt_writes_1_1_without_virtio_devices(void **state)
{
	struct state_vm a, b;
	void *blob;
	size_t n;

	(void)state;
	make_state(&a);
	a.nr_devs = 0;	/* the disk was the only device */
	assert_int_equal(state_fdt_write(&a, &blob, &n, err, sizeof(err)), 0);
	assert_int_equal(fdt_node_check_compatible(blob, 0, "kvmlu,vm-state-v1"), 0);
	if (state_fdt_load(blob, n, 2, &b, err, sizeof(err)))
		fail_msg("refused: %s", err);
	assert_int_equal(b.format_major, 1);
	assert_int_equal(b.format_minor, 1);
	assert_int_equal(state_vm_count(&b, &virtio_blk_type), 0);
	free(blob);
	state_vm_free(&a);
	state_vm_free(&b);
}

/* A virtio-net NIC in slot 1, after the disk, as a Linux driver leaves it running. */
static void make_net(struct virtio_net_state *d)
{
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	struct virtio_mmio_state *t = &d->t;
	uint16_t link_up = 1;

	memset(d, 0, sizeof(*d));
	d->slot = 1;
	d->base = 0xd0001000;
	d->gsi = 17;
	strcpy(d->tap, "vm1-net0");
	strcpy(d->bridge, "br0");
	memcpy(d->mac, mac, 6);
	t->device_id = 1;
	t->device_features = (1ULL << 32) | (1u << 16) | (1u << 5);
	t->driver_features = t->device_features;
	t->status = 1 | 2 | 4 | 8;
	t->nr_queues = 2;
	t->q[0] = (struct virtio_mmio_queue_state){
		.present = true, .size = 256, .ready = true, .desc = 0x7e000000,
		.avail = 0x7e001000, .used = 0x7e002000, .last_avail = 0x1234, .used_idx = 0x1234,
	};
	t->q[1] = (struct virtio_mmio_queue_state){
		.present = true, .size = 256, .ready = true, .desc = 0x7e004000,
		.avail = 0x7e005000, .used = 0x7e006000, .last_avail = 7, .used_idx = 7,
	};
	t->config_len = 8;
	memcpy(t->config, mac, 6);
	memcpy(t->config + 6, &link_up, 2);
}

/* The good state with a NIC too: format 2.1. */
static void *good_net_fdt(size_t *size)
{
	struct state_vm s;
	void *blob, *buf;
	size_t n;

	make_state(&s);
	make_net(state_vm_add_device(&s, &virtio_net_type));
	assert_int_equal(state_fdt_write(&s, &blob, &n, err, sizeof(err)), 0);
	state_vm_free(&s);
	buf = malloc(n + 4096);
	assert_non_null(buf);
	assert_int_equal(fdt_open_into(blob, buf, (int)n + 4096), 0);
	free(blob);
	*size = n + 4096;
	return buf;
}

#define VNET "/devices/virtio-net@d0001000"

static void test_state_fdt_roundtrip_keeps_virtio_net(void **state)
{
	struct state_vm a, b;
	void *blob;
	size_t n;

	(void)state;
	make_state(&a);
	make_net(state_vm_add_device(&a, &virtio_net_type));
	assert_int_equal(state_fdt_write(&a, &blob, &n, err, sizeof(err)), 0);
	if (state_fdt_load(blob, n, 2, &b, err, sizeof(err)))
		fail_msg("load: %s", err);
	save_case("../good/two_vcpus_virtio_net", blob, n, "");
	/* A NIC makes it 2.1: a 2.0 reader refuses the node it does not know. */
	assert_int_equal(b.format_major, 2);
	assert_int_equal(b.format_minor, 1);
	assert_int_equal(state_vm_count(&b, &virtio_blk_type), 1);
	assert_int_equal(state_vm_count(&b, &virtio_net_type), 1);
	{
		const struct virtio_net_state *x = NET(&a, 0), *y = NET(&b, 0);

		assert_int_equal(y->slot, 1);
		assert_int_equal(y->base, 0xd0001000);
		assert_int_equal(y->gsi, 17);
		assert_string_equal(y->tap, x->tap);
		assert_string_equal(y->bridge, x->bridge);
		assert_memory_equal(y->mac, x->mac, 6);
		assert_int_equal(y->t.device_id, 1);
		assert_int_equal(y->t.driver_features, x->t.driver_features);
		assert_int_equal(y->t.status, x->t.status);
		assert_int_equal(y->t.nr_queues, 2);
		assert_int_equal(y->t.config_len, 8);
		assert_memory_equal(y->t.config, x->t.config, 8);
		assert_memory_equal(&y->t.q[0], &x->t.q[0], sizeof(x->t.q[0]));
		assert_memory_equal(&y->t.q[1], &x->t.q[1], sizeof(x->t.q[1]));
	}
	free(blob);
	state_vm_free(&a);
	state_vm_free(&b);
}

static void test_state_fdt_rejects_virtio_net_multicast_mac(void **state)
{
	static const uint8_t mac[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	size_t n;
	void *fdt = good_net_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop(fdt, node(fdt, VNET), "mac", mac, 6), 0);
	BAD(fdt, "virtio-net@d0001000: mac 01:00:5e:00:00:01 is not a unicast address");
}

static void test_state_fdt_rejects_virtio_net_mac_not_in_config(void **state)
{
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x57 };
	size_t n;
	void *fdt = good_net_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop(fdt, node(fdt, VNET), "mac", mac, 6), 0);
	BAD(fdt, "config (8 bytes) does not hold mac 52:54:00:12:34:57");
}

static void test_state_fdt_rejects_virtio_net_mac_of_wrong_size(void **state)
{
	size_t n;
	void *fdt = good_net_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop(fdt, node(fdt, VNET), "mac", "\x52\x54\x00\x12", 4), 0);
	BAD(fdt, "property \"mac\" is 4 bytes, expected 6");
}

static void test_state_fdt_rejects_virtio_net_bad_tap_name(void **state)
{
	size_t n;
	void *fdt = good_net_fdt(&n);

	(void)state;
	assert_int_equal(fdt_setprop_string(fdt, node(fdt, VNET), "tap", "../eth0"), 0);
	BAD(fdt, "tap name \"../eth0\" is not an interface name");
}

static void test_state_fdt_rejects_virtio_net_in_the_disk_slot(void **state)
{
	size_t n;
	void *fdt = good_net_fdt(&n);

	(void)state;
	set_u32(fdt, VNET, "slot", 0);
	BAD(fdt, "NIC 0 is slot 0 at 0xd0001000 GSI 17, expected slot 1");
}

static void test_state_fdt_rejects_virtio_net_queue_index_out_of_range(void **state)
{
	size_t n;
	void *fdt = good_net_fdt(&n);

	(void)state;
	set_u32(fdt, VNET "/queue@1", "reg", 9);
	BAD(fdt, "queue index 9 out of range (at most 2 queues)");
}

static void test_state_fdt_rejects_virtio_net_frame_in_flight(void **state)
{
	size_t n;
	void *fdt = good_net_fdt(&n);

	(void)state;
	set_u32(fdt, VNET "/queue@0", "last-avail", 0x1235);
	BAD(fdt, "queue 0: last-avail 4661 != used-idx 4660: a request was in flight");
}

static void test_state_fdt_rejects_virtio_net_without_tx_queue(void **state)
{
	size_t n;
	void *fdt = good_net_fdt(&n);

	(void)state;
	assert_int_equal(fdt_del_node(fdt, node(fdt, VNET "/queue@1")), 0);
	BAD(fdt, "virtio-net@d0001000: 1 queues, the device has 2");
}

/*
 * A disk path is a file name: any bytes but NUL, kept as they are across
 * a restore. What the restored VMM's status then says of it must still be
 * a line its strict clients read: bytes that are not UTF-8 as U+FFFD.
 */
static void test_state_fdt_strings_reach_a_reply_as_valid_json(void **state)
{
	struct json_line_error e = { NULL, "" };
	json_object *o, *back = NULL;
	struct state_vm s;
	int blk = -1, sub;
	size_t n, len;
	void *fdt = good_fdt(&n);
	char *line;

	(void)state;
	fdt_for_each_subnode(sub, fdt, node(fdt, "/devices"))
		if (fdt_getprop(fdt, sub, "disk-path", NULL))
			blk = sub;
	assert_true(blk >= 0);
	assert_int_equal(fdt_setprop_string(fdt, blk, "disk-path", "/srv/\xff\xc3(.raw"), 0);
	fdt_pack(fdt);
	if (state_fdt_load(fdt, fdt_totalsize(fdt), 0, &s, err, sizeof(err)))
		fail_msg("refused: %s", err);
	assert_string_equal(DISK(&s, 0)->ident.path, "/srv/\xff\xc3(.raw");
	/* The strings vm_commands.c puts in a status reply. */
	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(s.name));
	json_object_object_add(o, "path", json_object_new_string(DISK(&s, 0)->ident.path));
	json_object_object_add(o, "id", json_object_new_string(DISK(&s, 0)->id));
	line = json_line_format(o, &len);
	assert_non_null(line);
	if (json_line_parse(line, len - 1, &back, &e))
		fail_msg("status line refused by a client: %s", e.desc);
	assert_string_equal(json_object_get_string(json_object_object_get(back, "path")),
			    "/srv/\xef\xbf\xbd\xef\xbf\xbd(.raw");
	assert_string_equal(json_object_get_string(json_object_object_get(back, "id")), "root");
	json_object_put(back);
	json_object_put(o);
	free(line);
	state_vm_free(&s);
	free(fdt);
}

static void test_state_fdt_rejects_nul_inside_a_string(void **state)
{
	static const char path[] = "/srv/a\0b.raw";
	size_t n;
	void *fdt = good_fdt(&n);
	int blk = -1, sub;

	(void)state;
	fdt_for_each_subnode(sub, fdt, node(fdt, "/devices"))
		if (fdt_getprop(fdt, sub, "disk-path", NULL))
			blk = sub;
	assert_true(blk >= 0);
	assert_int_equal(fdt_setprop(fdt, blk, "disk-path", path, sizeof(path)), 0);
	BAD(fdt, "not a single string");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_fdt_strings_reach_a_reply_as_valid_json),
		cmocka_unit_test(test_state_fdt_rejects_nul_inside_a_string),
		cmocka_unit_test(test_state_fdt_roundtrip_keeps_every_field),
		cmocka_unit_test(test_state_fdt_reads_newer_minor_with_unknown_props),
		cmocka_unit_test(test_state_fdt_rejects_truncated_fdt),
		cmocka_unit_test(test_state_fdt_rejects_corrupted_fdt),
		cmocka_unit_test(test_state_fdt_rejects_wrong_property_size),
		cmocka_unit_test(test_state_fdt_rejects_ragged_msr_list),
		cmocka_unit_test(test_state_fdt_rejects_huge_xsave),
		cmocka_unit_test(test_state_fdt_rejects_missing_node),
		cmocka_unit_test(test_state_fdt_rejects_missing_property),
		cmocka_unit_test(test_state_fdt_rejects_out_of_range_mp_state),
		cmocka_unit_test(test_state_fdt_rejects_zero_tsc_khz),
		cmocka_unit_test(test_state_fdt_rejects_uart_value_above_byte),
		cmocka_unit_test(test_state_fdt_rejects_overlapping_regions),
		cmocka_unit_test(test_state_fdt_rejects_unaligned_region),
		cmocka_unit_test(test_state_fdt_rejects_region_beyond_address_limit),
		cmocka_unit_test(test_state_fdt_rejects_vcpu_count_mismatch),
		cmocka_unit_test(test_state_fdt_rejects_state_for_other_vcpu_count),
		cmocka_unit_test(test_state_fdt_rejects_duplicate_vcpu),
		cmocka_unit_test(test_state_fdt_rejects_future_major_version),
		cmocka_unit_test(test_state_fdt_rejects_unknown_node_compatible),
		cmocka_unit_test(test_state_fdt_rejects_bad_checksum_text),
		cmocka_unit_test(test_state_fdt_reads_a_state_without_chunk_digests),
		cmocka_unit_test(test_state_fdt_rejects_ragged_chunk_digests),
		cmocka_unit_test(test_state_fdt_rejects_chunk_digests_of_other_memory),
		cmocka_unit_test(test_state_fdt_rejects_chunk_digests_that_are_not_the_checksum),
		cmocka_unit_test(test_state_fdt_rejects_chunk_digests_without_checksum),
		cmocka_unit_test(test_state_fdt_rejects_unknown_backend),
		cmocka_unit_test(test_state_fdt_rejects_unterminated_name),
		cmocka_unit_test(test_state_fdt_rejects_name_with_slash),
		cmocka_unit_test(test_state_fdt_rejects_duplicate_msr),
		cmocka_unit_test(test_state_fdt_rejects_lapic_without_irqchip),
		cmocka_unit_test(test_state_fdt_rejects_virtio_queue_index_out_of_range),
		cmocka_unit_test(test_state_fdt_rejects_a_queue_the_device_lacks),
		cmocka_unit_test(test_state_fdt_rejects_a_device_of_unknown_type),
		cmocka_unit_test(test_state_fdt_rejects_virtio_request_in_flight),
		cmocka_unit_test(test_state_fdt_rejects_virtio_index_above_16_bits),
		cmocka_unit_test(test_state_fdt_rejects_virtio_queue_of_bad_size),
		cmocka_unit_test(test_state_fdt_rejects_virtio_features_not_offered),
		cmocka_unit_test(test_state_fdt_rejects_virtio_in_another_slot),
		cmocka_unit_test(test_state_fdt_rejects_relative_disk_path),
		cmocka_unit_test(test_state_fdt_rejects_virtio_driver_ok_without_features_ok),
		cmocka_unit_test(test_state_fdt_rejects_virtio_devices_in_a_1x_state),
		cmocka_unit_test(test_state_fdt_writes_1_1_without_virtio_devices),
		cmocka_unit_test(test_state_fdt_roundtrip_keeps_virtio_net),
		cmocka_unit_test(test_state_fdt_rejects_virtio_net_multicast_mac),
		cmocka_unit_test(test_state_fdt_rejects_virtio_net_mac_not_in_config),
		cmocka_unit_test(test_state_fdt_rejects_virtio_net_mac_of_wrong_size),
		cmocka_unit_test(test_state_fdt_rejects_virtio_net_bad_tap_name),
		cmocka_unit_test(test_state_fdt_rejects_virtio_net_in_the_disk_slot),
		cmocka_unit_test(test_state_fdt_rejects_virtio_net_queue_index_out_of_range),
		cmocka_unit_test(test_state_fdt_rejects_virtio_net_frame_in_flight),
		cmocka_unit_test(test_state_fdt_rejects_virtio_net_without_tx_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

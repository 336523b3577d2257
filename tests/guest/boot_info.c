/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the boot info the VMM left at KVMLU_BOOT_INFO_GPA. The witness
 * trusts nothing in it: every field it uses is checked, and a bad one
 * stops the guest with a line naming the field and its value, before any
 * RAM is written. Read once by vCPU 0 at first start; the copy lives in
 * guest RAM, so a restored guest never reads the boot info again.
 */
#include <stdint.h>

#include <kvmlu/payload_abi.h>

#include "boot_info.h"
#include "layout.h"

/* Far above any real TSC; catches a VMM passing Hz or garbage. */
#define BOOT_INFO_MAX_TSC_KHZ 100000000ULL
#define BOOT_INFO_MAX_GPA (KVMLU_PAYLOAD_MAX_RAM_GIB << 30)

static int boot_info_refuse(struct boot_info_error *err, const char *what, uint64_t value)
{
	err->what = what;
	err->value = value;
	return -WITNESS_EINVAL;
}

static int boot_info_add_region(struct boot_params *out, const struct kvmlu_boot_region *r,
				uint64_t prev_end, struct boot_info_error *err)
{
	struct pattern_ram *ram = &out->ram;
	uint64_t start = r->gpa, end;

	if (r->size == 0)
		return boot_info_refuse(err, "region_size", r->size);
	if ((r->gpa | r->size) & (PATTERN_PAGE_SIZE - 1))
		return boot_info_refuse(err, "region_unaligned_gpa", r->gpa);
	if (r->gpa < prev_end)
		return boot_info_refuse(err, "region_overlap_gpa", r->gpa);
	/* The VMM's page tables map only this much; beyond, a write would fault. */
	if (r->size > BOOT_INFO_MAX_GPA || r->gpa > BOOT_INFO_MAX_GPA - r->size)
		return boot_info_refuse(err, "region_end_gpa", r->gpa + r->size);
	end = r->gpa + r->size;

	out->ram_bytes += r->size;
	if (start < KVMLU_PAYLOAD_AREA_END)
		start = KVMLU_PAYLOAD_AREA_END;
	if (start >= end)
		return 0;
	ram->spans[ram->nr_spans].gpa = start;
	ram->spans[ram->nr_spans].size = end - start;
	ram->nr_spans++;
	ram->bytes += end - start;
	return 0;
}

int boot_info_read(const struct kvmlu_boot_info *bi, struct boot_params *out,
		   struct boot_info_error *err)
{
	uint64_t prev_end = 0;
	uint32_t i;
	int ret;

	if (bi->magic != KVMLU_BOOT_INFO_MAGIC)
		return boot_info_refuse(err, "magic", bi->magic);
	if (bi->version != KVMLU_BOOT_INFO_VERSION)
		return boot_info_refuse(err, "version", bi->version);
	if (bi->nr_vcpus == 0 || bi->nr_vcpus > WITNESS_MAX_CPUS)
		return boot_info_refuse(err, "nr_vcpus", bi->nr_vcpus);
	if (bi->tsc_khz == 0 || bi->tsc_khz > BOOT_INFO_MAX_TSC_KHZ)
		return boot_info_refuse(err, "tsc_khz", bi->tsc_khz);
	if (bi->nr_regions == 0 || bi->nr_regions > KVMLU_BOOT_MAX_REGIONS)
		return boot_info_refuse(err, "nr_regions", bi->nr_regions);

	out->nr_cpus = bi->nr_vcpus;
	out->tsc_khz = bi->tsc_khz;
	out->ram_bytes = 0;
	out->ram.nr_spans = 0;
	out->ram.bytes = 0;
	for (i = 0; i < bi->nr_regions; i++) {
		ret = boot_info_add_region(out, &bi->regions[i], prev_end, err);
		if (ret)
			return ret;
		prev_end = bi->regions[i].gpa + bi->regions[i].size;
	}
	if (out->ram.bytes == 0)
		return boot_info_refuse(err, "ram_above_payload_area", out->ram_bytes);
	return 0;
}

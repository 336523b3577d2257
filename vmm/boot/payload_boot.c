// SPDX-License-Identifier: GPL-2.0
/*
 * Flat payload boot (see payload_boot.h and include/kvmlu/payload_abi.h).
 *
 * The payload file is untrusted: it must be a regular file, non-empty and
 * no larger than KVMLU_PAYLOAD_MAX_SIZE, or nothing is written. RAM must
 * hold the payload area and at most KVMLU_PAYLOAD_MAX_RAM_GIB, as the
 * boot page tables map that much with one PD page per GiB.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "kvmlu/kvm_uapi.h"
#include "kvmlu/payload_abi.h"
#include "vmm/boot/boot_file.h"
#include "vmm/boot/long_mode.h"
#include "vmm/boot/payload_boot.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

static void *payload_gpa(struct vm *vm, uint64_t gpa, uint64_t len)
{
	return guestmem_gpa_to_hva(&vm->mem, gpa, len);
}

static uint64_t payload_ram_top(const struct vm *vm)
{
	const struct guestmem_region *last = &vm->mem.r[vm->mem.nr - 1];

	return last->gpa + last->size;
}

static int payload_load_image(struct vm *vm, const char *path, uint64_t *size,
			      char *err, size_t errlen)
{
	uint8_t *dst;
	void *buf;
	size_t len;
	int rc;

	rc = boot_file_read("--payload", path, KVMLU_PAYLOAD_MAX_SIZE, &buf, &len, err, errlen);
	if (rc)
		return rc;
	dst = payload_gpa(vm, KVMLU_PAYLOAD_ENTRY, len);
	if (!dst) {
		rc = kvmlu_err(err, errlen, -ENOMEM, "--payload %s: guest RAM has no room at %#llx",
			       path, KVMLU_PAYLOAD_ENTRY);
	} else {
		memcpy(dst, buf, len);
		*size = len;
	}
	free(buf);
	return rc;
}

static void payload_write_gdt(struct vm *vm)
{
	long_mode_write_gdt(payload_gpa(vm, KVMLU_BOOT_GDT_GPA, 3 * sizeof(uint64_t)), 3,
			    KVMLU_BOOT_CS, KVMLU_BOOT_DS);
}

static void payload_write_page_tables(struct vm *vm, uint64_t top)
{
	uint64_t gib = (top + GIB - 1) / GIB;

	/* User-accessible: the payload runs its loops at CPL 3. */
	long_mode_identity_map(payload_gpa(vm, KVMLU_PML4_GPA, 4096),
			       payload_gpa(vm, KVMLU_PDPT_GPA, 4096),
			       payload_gpa(vm, KVMLU_PD_GPA, gib * 4096),
			       KVMLU_PDPT_GPA, KVMLU_PD_GPA, gib, PTE_US);
}

static void payload_write_boot_info(struct vm *vm, uint64_t image_size)
{
	struct kvmlu_boot_info *bi = payload_gpa(vm, KVMLU_BOOT_INFO_GPA, sizeof(*bi));
	unsigned int i;

	memset(bi, 0, sizeof(*bi));
	bi->magic = KVMLU_BOOT_INFO_MAGIC;
	bi->version = KVMLU_BOOT_INFO_VERSION;
	bi->nr_vcpus = vm->nr_vcpus;
	bi->tsc_khz = vm->tsc_khz;
	bi->payload_start = KVMLU_PAYLOAD_ENTRY;
	bi->payload_end = KVMLU_PAYLOAD_ENTRY + image_size;
	/* Boot structures and the image itself; the payload's own bss and stacks come after. */
	bi->low_reserved_end = (bi->payload_end + 4095) & ~4095ULL;
	bi->nr_regions = vm->mem.nr;
	for (i = 0; i < vm->mem.nr && i < KVMLU_BOOT_MAX_REGIONS; i++) {
		bi->regions[i].gpa = vm->mem.r[i].gpa;
		bi->regions[i].size = vm->mem.r[i].size;
	}
}

/* long_mode_regs_fn for every vCPU (no ctx): the entry payload_abi.h describes. */
static void payload_vcpu_regs(const void *ctx, unsigned int vcpu_index,
			      struct kvm_regs *r, struct kvm_sregs *sr)
{
	(void)ctx;
	long_mode_sregs(sr, KVMLU_BOOT_CS, KVMLU_BOOT_DS, KVMLU_BOOT_GDT_GPA, 3, KVMLU_PML4_GPA);
	/* What payload_abi.h promises on top of bare long mode. */
	sr->cr0 |= CR0_WP | CR0_AM;
	sr->cr4 |= CR4_OSFXSR | CR4_OSXMMEXCPT;
	sr->efer |= EFER_SCE | EFER_NXE;
	r->rip = KVMLU_PAYLOAD_ENTRY;
	r->rdi = vcpu_index;
	r->rsi = KVMLU_BOOT_INFO_GPA;
	r->rflags = 0x2;
}

static int payload_setup_vcpu(struct vcpu *v, char *err, size_t errlen)
{
	int rc = long_mode_start_vcpu(v, payload_vcpu_regs, NULL, err, errlen);

	if (rc)
		return rc;
	/* With an in-kernel LAPIC the APs would wait for INIT/SIPI otherwise. */
	return vcpu_set_mp_state(v, KVM_MP_STATE_RUNNABLE, err, errlen);
}

int payload_boot(struct vm *vm, const char *path, char *err, size_t errlen)
{
	uint64_t top, size = 0;
	unsigned int i;
	int rc;

	if (!vm->mem.nr)
		return kvmlu_err(err, errlen, -EINVAL, "payload boot: VM has no RAM");
	top = payload_ram_top(vm);
	if (!payload_gpa(vm, 0, KVMLU_PAYLOAD_AREA_END))
		return kvmlu_err(err, errlen, -EINVAL,
				 "payload boot: needs RAM from 0 to %#llx in one region",
				 KVMLU_PAYLOAD_AREA_END);
	if (top > KVMLU_PAYLOAD_MAX_RAM_GIB * GIB)
		return kvmlu_err(err, errlen, -EINVAL,
				 "payload boot: RAM ends at %#llx, over the %llu GiB the boot page tables map",
				 (unsigned long long)top, KVMLU_PAYLOAD_MAX_RAM_GIB);
	if (vm->mem.nr > KVMLU_BOOT_MAX_REGIONS)
		return kvmlu_err(err, errlen, -EINVAL, "payload boot: %u RAM regions, boot info holds %d",
				 vm->mem.nr, KVMLU_BOOT_MAX_REGIONS);
	rc = payload_load_image(vm, path, &size, err, errlen);
	if (rc)
		return rc;
	payload_write_gdt(vm);
	payload_write_boot_info(vm, size);
	payload_write_page_tables(vm, top);
	for (i = 0; i < vm->nr_vcpus; i++) {
		rc = payload_setup_vcpu(&vm->vcpus[i], err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

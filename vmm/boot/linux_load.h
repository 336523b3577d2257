/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Putting a parsed bzImage, its initrd and command line into guest RAM
 * per the x86 64-bit boot protocol: the protected-mode kernel at its
 * preferred address (or the first aligned one from 1 MiB), the zero page
 * (boot_params: the image's setup header, e820 map, command line and
 * initrd pointers, type_of_loader), a boot GDT with the protocol's
 * __BOOT_CS/__BOOT_DS, identity page tables for 0..4 GiB, the MP table
 * (for kernels without ACPI) and the ACPI tables (vmm/acpi/; the zero
 * page's acpi_rsdp_addr points at their RSDP). The initrd goes as high as the kernel allows (initrd_addr_max)
 * and low RAM reaches, above the kernel's init_size.
 *
 * Lifecycle: linux_load_plan() decides every address and checks that
 * everything fits without touching guest RAM, so a refusal changes
 * nothing; linux_load_write() then writes. Used once at first boot.
 */
#ifndef KVMLU_VMM_LINUX_LOAD_H
#define KVMLU_VMM_LINUX_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "guestmem/guestmem.h"
#include "kvmlu/kvm_uapi.h"
#include "vmm/acpi/acpi_machine.h"
#include "vmm/boot/linux_bzimage.h"

struct linux_load_input {
	const struct linux_bzimage *image;
	const void *initrd;		/* NULL: none */
	size_t initrd_size;
	const char *cmdline;		/* never NULL; may be "" */
	unsigned int nr_cpus;
	/* virtio-mmio devices for the DSDT (vmm/acpi/acpi_machine.h) */
	const struct acpi_mmio_device *mmio;
	size_t n_mmio;
	/* virtio-pci: the host bridge's memory window for the DSDT; size 0: no PCI */
	uint64_t pci_window_base;
	uint32_t pci_window_size;
};

struct linux_load_plan {
	uint64_t low_ram_end;		/* end of RAM contiguous from 0, <= 3 GiB */
	uint64_t kernel_gpa;		/* protected-mode kernel loaded here */
	uint64_t kernel_end;		/* kernel_gpa + init_size */
	uint64_t entry;			/* startup_64 */
	uint64_t initrd_gpa;		/* 0 without an initrd */
	uint64_t initrd_size;
	size_t cmdline_len;		/* without the NUL */
};

int linux_load_plan(const struct guestmem *gm, const struct linux_load_input *in,
		    struct linux_load_plan *plan, char *err, size_t errlen);

/* Write everything planned; the plan must come from the same gm and in. */
int linux_load_write(const struct guestmem *gm, const struct linux_load_input *in,
		     const struct linux_load_plan *plan, char *err, size_t errlen);

/*
 * Registers of the boot vCPU at the 64-bit entry: RIP = startup_64,
 * RSI = zero page, interrupts off; long mode with the boot GDT and page
 * tables. sregs comes in as KVM_GET_SREGS gave it (APIC base, etc. kept).
 */
void linux_load_bsp_regs(const struct linux_load_plan *plan, struct kvm_regs *regs,
			 struct kvm_sregs *sregs);

#endif /* KVMLU_VMM_LINUX_LOAD_H */

// SPDX-License-Identifier: GPL-2.0
/* Linux guest boot: files in, boot memory written, BSP at the entry. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/boot/boot_file.h"
#include "vmm/boot/linux_boot.h"
#include "vmm/boot/linux_bzimage.h"
#include "vmm/boot/linux_load.h"
#include "vmm/boot/long_mode.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"

/* long_mode_regs_fn for the BSP: ctx is the struct linux_load_plan. */
static void linux_boot_bsp_regs(const void *ctx, unsigned int vcpu_index,
				struct kvm_regs *r, struct kvm_sregs *sr)
{
	(void)vcpu_index;
	linux_load_bsp_regs(ctx, r, sr);
}

/*
 * The VM's virtio-mmio devices as the DSDT lists them: the guest's
 * virtio_mmio driver finds them only there (no command-line devices in
 * Debian's kernel). The layout's GSIs (16..23) and windows (0xd0000000,
 * below the APIC pages) lie inside what the ACPI builder takes, and
 * acpi_machine_check() checks it again in linux_load_plan().
 */
_Static_assert(VM_VIRTIO_GSI_BASE >= ACPI_MMIO_GSI_MIN &&
	       VM_VIRTIO_GSI_BASE + VM_VIRTIO_MAX_DEVICES - 1 <= ACPI_MMIO_GSI_MAX,
	       "virtio-mmio GSIs outside what the DSDT may name");
_Static_assert(VM_VIRTIO_MAX_DEVICES <= ACPI_MAX_MMIO_DEVICES, "too many virtio-mmio devices");
_Static_assert(VM_VIRTIO_MMIO_BASE + VM_VIRTIO_MAX_DEVICES * VM_VIRTIO_MMIO_SIZE <= 0xfec00000ULL,
	       "virtio-mmio windows reach the IOAPIC page");

static int linux_boot_mmio(const struct vm *vm,
			   struct acpi_mmio_device out[VM_VIRTIO_MAX_DEVICES], size_t *n_out,
			   char *err, size_t errlen)
{
	struct vm_virtio_slot slots[VM_VIRTIO_MAX_DEVICES];
	unsigned int n = vm_virtio_mmio_devices(&vm->virtio, slots, VM_VIRTIO_MAX_DEVICES);

	/* A device the guest is not told of would be a disk it never sees. */
	if (n > VM_VIRTIO_MAX_DEVICES)
		return kvmlu_err(err, errlen, -E2BIG,
				 "Linux boot: %u virtio-mmio devices, the layout has %u slots", n,
				 VM_VIRTIO_MAX_DEVICES);
	for (unsigned int i = 0; i < n; i++)
		out[i] = (struct acpi_mmio_device){
			.base = slots[i].base, .size = slots[i].size, .gsi = slots[i].gsi,
		};
	*n_out = n;
	return 0;
}

int linux_boot(struct vm *vm, const char *kernel, const char *initrd,
	       const char *cmdline, char *err, size_t errlen)
{
	struct acpi_mmio_device mmio[VM_VIRTIO_MAX_DEVICES];
	struct linux_load_input in = { 0 };
	struct linux_load_plan plan;
	struct linux_bzimage img;
	void *kbuf = NULL, *ibuf = NULL;
	size_t klen = 0, ilen = 0;
	char why[256];
	int rc;

	if (!vm->nr_vcpus)
		return kvmlu_err(err, errlen, -EINVAL, "Linux boot: VM has no vCPU");
	rc = boot_file_read("--kernel", kernel, LINUX_BZIMAGE_MAX_SIZE, &kbuf, &klen,
				  err, errlen);
	if (rc)
		return rc;
	rc = linux_bzimage_parse(kbuf, klen, &img, why, sizeof(why));
	if (rc) {
		kvmlu_err(err, errlen, rc, "--kernel %s: %s", kernel, why);
		goto err_free_kernel;
	}
	if (initrd) {
		rc = boot_file_read("--initrd", initrd, LINUX_INITRD_MAX_SIZE, &ibuf, &ilen,
					  err, errlen);
		if (rc)
			goto err_free_kernel;
	}
	in.image = &img;
	in.initrd = ibuf;
	in.initrd_size = ilen;
	in.cmdline = cmdline ? cmdline : LINUX_BOOT_DEFAULT_CMDLINE;
	in.nr_cpus = vm->nr_vcpus;
	rc = linux_boot_mmio(vm, mmio, &in.n_mmio, err, errlen);
	if (rc)
		goto err_free_initrd;
	in.mmio = in.n_mmio ? mmio : NULL;
	if (vm->virtio.transport == VM_VIRTIO_TRANSPORT_PCI) {
		in.pci_window_base = VM_VIRTIO_PCI_WINDOW_BASE;
		in.pci_window_size = VM_VIRTIO_PCI_WINDOW_SIZE;
	}
	rc = linux_load_plan(&vm->mem, &in, &plan, err, errlen);
	if (rc)
		goto err_free_initrd;
	rc = linux_load_write(&vm->mem, &in, &plan, err, errlen);
	if (rc)
		goto err_free_initrd;
	/* The APs keep KVM's reset state and wait for Linux's INIT/SIPI. */
	rc = long_mode_start_vcpu(&vm->vcpus[0], linux_boot_bsp_regs, &plan, err, errlen);
err_free_initrd:
	free(ibuf);
err_free_kernel:
	free(kbuf);
	return rc;
}

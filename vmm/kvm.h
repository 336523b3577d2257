/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/kvm: opened once per VMM process, checked for the API version and
 * the capabilities kvmlu relies on, closed when the VM is destroyed. The
 * system fd only creates VMs and answers capability questions.
 */
#ifndef KVMLU_VMM_KVM_H
#define KVMLU_VMM_KVM_H

#include <stddef.h>

#include "guestmem/guestmem.h"

#define KVMLU_KVM_DEV "/dev/kvm"

/*
 * Open /dev/kvm (path may be NULL for the default). Returns the fd or
 * -errno; err gets a hint that differs for a missing device node, a
 * permission problem and a kernel without KVM support.
 */
int kvm_open(const char *path, char *err, size_t errlen);

/* KVM_CHECK_EXTENSION on fd (system or VM fd): the value, 0 if absent. */
int kvm_check_cap(int fd, long cap);

/* Refuse to go on unless everything a VM with this backend needs is there. */
int kvm_check_caps(int kvm_fd, enum guestmem_backend backend,
		   char *err, size_t errlen);

/* KVM_GET_VCPU_MMAP_SIZE: bytes of each vCPU's shared kvm_run area. */
int kvm_vcpu_mmap_size(int kvm_fd, char *err, size_t errlen);

#endif /* KVMLU_VMM_KVM_H */

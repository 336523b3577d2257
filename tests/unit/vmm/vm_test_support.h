/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the unit tests that build a real VM on /dev/kvm share
 * (test_vm_virtio*.c): whether /dev/kvm opens, a scratch disk file,
 * guest addresses, and 32-bit accesses through the VM's I/O bus as a
 * vCPU's MMIO exit would make them.
 */
#ifndef KVMLU_TESTS_UNIT_VMM_VM_TEST_SUPPORT_H
#define KVMLU_TESTS_UNIT_VMM_VM_TEST_SUPPORT_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "vmm/vm.h"

static inline bool vt_have_kvm(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* A 1 MiB scratch disk /tmp/kvmlu-test-TAG-XXXXXX; its name in path. */
static inline void vt_disk_make(char *path, size_t len, const char *tag)
{
	int fd;

	snprintf(path, len, "/tmp/kvmlu-test-%s-XXXXXX", tag);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
}

static inline void *vt_gpa(struct vm *vm, uint64_t a)
{
	return guestmem_gpa_to_hva(&vm->mem, a, 1);
}

static inline uint32_t vt_mmio_rd(struct vm *vm, uint64_t addr)
{
	uint32_t v = 0;

	assert_true(io_bus_access(&vm->bus, IO_SPACE_MMIO, addr, (uint8_t *)&v, 4, false));
	return v;
}

static inline void vt_mmio_wr(struct vm *vm, uint64_t addr, uint32_t v)
{
	assert_true(io_bus_access(&vm->bus, IO_SPACE_MMIO, addr, (uint8_t *)&v, 4, true));
}

#endif /* KVMLU_TESTS_UNIT_VMM_VM_TEST_SUPPORT_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kvm: open with a hint that tells the user what to fix, and the
 * capability checks done before any VM exists, so a VMM that cannot work
 * on this host stops with one clear line instead of failing half-way.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/err.h"
#include "kvmlu/kvm_uapi.h"
#include "vmm/kvm.h"

int kvm_open(const char *path, char *err, size_t errlen)
{
	int fd, ver, e;

	if (!path)
		path = KVMLU_KVM_DEV;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		switch (e) {
		case ENOENT:
			return kvmlu_err(err, errlen, -e,
				       "open %s: no such device node (is the kvm module loaded? kvm_intel or kvm_amd)",
				       path);
		case EACCES:
		case EPERM:
			return kvmlu_err(err, errlen, -e,
				       "open %s: permission denied (run as root or join the kvm group)",
				       path);
		case ENODEV:
		case ENXIO:
			return kvmlu_err(err, errlen, -e,
				       "open %s: %s (this CPU or kernel has no usable virtualization support; check VT-x/AMD-V in the firmware)",
				       path, strerror(e));
		default:
			return kvmlu_err(err, errlen, -e, "open %s: %s", path, strerror(e));
		}
	}
	ver = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (ver != KVM_API_VERSION) {
		close(fd);
		return kvmlu_err(err, errlen, -EINVAL,
			       "%s: KVM_GET_API_VERSION returned %d, need %d",
			       path, ver, KVM_API_VERSION);
	}
	return fd;
}

int kvm_check_cap(int fd, long cap)
{
	int r = ioctl(fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? 0 : r;
}

struct kvm_needed_cap {
	long cap;
	const char *name;
};

static const struct kvm_needed_cap kvm_base_caps[] = {
	{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP" },
	{ KVM_CAP_PIT2, "KVM_CAP_PIT2" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
	{ KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR" },
	{ KVM_CAP_SET_IDENTITY_MAP_ADDR, "KVM_CAP_SET_IDENTITY_MAP_ADDR" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
	{ KVM_CAP_MP_STATE, "KVM_CAP_MP_STATE" },
	{ KVM_CAP_GET_TSC_KHZ, "KVM_CAP_GET_TSC_KHZ" },
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
};

int kvm_check_caps(int kvm_fd, enum guestmem_backend backend,
		   char *err, size_t errlen)
{
	size_t i;
	int flags;

	for (i = 0; i < sizeof(kvm_base_caps) / sizeof(kvm_base_caps[0]); i++)
		if (!kvm_check_cap(kvm_fd, kvm_base_caps[i].cap))
			return kvmlu_err(err, errlen, -ENOTSUP,
				       "KVM lacks %s (capability %ld)",
				       kvm_base_caps[i].name, kvm_base_caps[i].cap);
	if (backend != GUESTMEM_GUEST_MEMFD)
		return 0;
	if (!kvm_check_cap(kvm_fd, KVM_CAP_GUEST_MEMFD))
		return kvmlu_err(err, errlen, -ENOTSUP,
			       "--memory-backend guest_memfd: KVM lacks KVM_CAP_GUEST_MEMFD (%d)",
			       KVM_CAP_GUEST_MEMFD);
	if (!kvm_check_cap(kvm_fd, KVM_CAP_USER_MEMORY2))
		return kvmlu_err(err, errlen, -ENOTSUP,
			       "--memory-backend guest_memfd: KVM lacks KVM_CAP_USER_MEMORY2 (%d)",
			       KVM_CAP_USER_MEMORY2);
	flags = kvm_check_cap(kvm_fd, KVM_CAP_GUEST_MEMFD_FLAGS);
	if ((flags & (GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED)) !=
	    (GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED))
		return kvmlu_err(err, errlen, -ENOTSUP,
			       "--memory-backend guest_memfd: KVM_CAP_GUEST_MEMFD_FLAGS is %#x, need MMAP|INIT_SHARED (%#llx)",
			       flags, (unsigned long long)(GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED));
	return 0;
}

int kvm_vcpu_mmap_size(int kvm_fd, char *err, size_t errlen)
{
	int r = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);

	if (r < 0)
		return kvmlu_err(err, errlen, -errno, "KVM_GET_VCPU_MMAP_SIZE: %s",
			       strerror(errno));
	if ((size_t)r < sizeof(struct kvm_run))
		return kvmlu_err(err, errlen, -EINVAL,
			       "KVM_GET_VCPU_MMAP_SIZE returned %d, smaller than struct kvm_run (%zu)",
			       r, sizeof(struct kvm_run));
	return r;
}

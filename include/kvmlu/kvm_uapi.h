/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM uAPI that Debian 12's linux-libc-dev (6.1) lacks, with the values of
 * Linux 7.3 (include/uapi/linux/kvm.h, arch/x86/include/uapi/asm/kvm.h).
 *
 * Everything KVM-related in kvmlu includes this header instead of
 * <linux/kvm.h> directly, so there is one place where "newer than the
 * system headers" is decided. Each block is guarded by a macro the real
 * header defines together with it, so building against the 7.3 headers
 * installed by `make kernel` (-I build/kernel-headers/include) uses theirs.
 */
#ifndef KVMLU_KVM_UAPI_H
#define KVMLU_KVM_UAPI_H

#include <linux/kvm.h>
#include <linux/types.h>

/* Linux 6.8: memslots that can name a guest_memfd. */
#ifndef KVM_SET_USER_MEMORY_REGION2
struct kvm_userspace_memory_region2 {
	__u32 slot;
	__u32 flags;
	__u64 guest_phys_addr;
	__u64 memory_size;
	__u64 userspace_addr;
	__u64 guest_memfd_offset;
	__u32 guest_memfd;
	__u32 pad1;
	__u64 pad2[14];
};
#define KVM_SET_USER_MEMORY_REGION2 \
	_IOW(KVMIO, 0x49, struct kvm_userspace_memory_region2)
#endif

#ifndef KVM_MEM_GUEST_MEMFD
#define KVM_MEM_GUEST_MEMFD (1UL << 2)
#endif

/* Linux 6.8: guest_memfd; the mmap/shared flags are from 6.18. */
#ifndef KVM_CREATE_GUEST_MEMFD
struct kvm_create_guest_memfd {
	__u64 size;
	__u64 flags;
	__u64 reserved[6];
};
#define KVM_CREATE_GUEST_MEMFD \
	_IOWR(KVMIO, 0xd4, struct kvm_create_guest_memfd)
#endif

#ifndef GUEST_MEMFD_FLAG_MMAP
#define GUEST_MEMFD_FLAG_MMAP (1ULL << 0)
#endif
#ifndef GUEST_MEMFD_FLAG_INIT_SHARED
#define GUEST_MEMFD_FLAG_INIT_SHARED (1ULL << 1)
#endif

#ifndef KVM_CAP_USER_MEMORY2
#define KVM_CAP_USER_MEMORY2 231
#endif
#ifndef KVM_CAP_MEMORY_ATTRIBUTES
#define KVM_CAP_MEMORY_ATTRIBUTES 233
#endif
#ifndef KVM_CAP_GUEST_MEMFD
#define KVM_CAP_GUEST_MEMFD 234
#endif
#ifndef KVM_CAP_VM_TYPES
#define KVM_CAP_VM_TYPES 235
#endif
#ifndef KVM_CAP_GUEST_MEMFD_FLAGS
#define KVM_CAP_GUEST_MEMFD_FLAGS 244
#endif

/*
 * Not upstream: the project's kernel patch (kernel/patches/0002) lets a VM
 * link an existing shared guest_memfd's memory, e.g. one retrieved from a
 * LUO session after kexec, or one of the VM a live upgrade replaces.
 * Probe KVM_CAP_GUEST_MEMFD_LINK before use: stock kernels lack it.
 */
#ifndef KVM_LINK_GUEST_MEMFD
struct kvm_link_guest_memfd {
	__u32 fd;
	__u32 flags;
	__u64 reserved[3];
};
#define KVM_LINK_GUEST_MEMFD _IOW(KVMIO, 0xd6, struct kvm_link_guest_memfd)
#endif
#ifndef KVM_CAP_GUEST_MEMFD_LINK
#define KVM_CAP_GUEST_MEMFD_LINK 252
#endif

/*
 * <linux/magic.h>, Linux 6.18+: the f_type fstatfs() gives a guest_memfd
 * on kernels that keep it on its own pseudo fs (its /proc/self/fd link is
 * then "/[kvm-gmem] (deleted)", no longer "anon_inode:[kvm-gmem]").
 */
#ifndef GUEST_MEMFD_MAGIC
#define GUEST_MEMFD_MAGIC 0x474d454d
#endif

/* Present in 6.1 already; listed so a reader sees the whole set used. */
#ifndef KVM_GET_SREGS2
#error "KVM_GET_SREGS2 missing: linux-libc-dev older than 5.14"
#endif
#ifndef KVM_GET_XSAVE2
#error "KVM_GET_XSAVE2 missing: linux-libc-dev older than 5.17"
#endif

#endif /* KVMLU_KVM_UAPI_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The uAPI facts kvmlu depends on: struct sizes, field offsets, ioctl
 * numbers and capability values from <linux/kvm.h> and the project's
 * include/kvmlu/{kvm,liveupdate}_uapi.h. uapi_dump.c evaluates them against
 * the kernel's own installed headers (make headers_install of the kernel
 * the project builds); uapi_match.c asserts at compile time that kvmlu's
 * headers, on this system's older linux-libc-dev, give the same values.
 * Add a line here when kvmlu starts to use another definition.
 */
#ifndef KVMLU_UAPI_FACTS_H
#define KVMLU_UAPI_FACTS_H

#include <stddef.h>

#define KVMLU_UAPI_FACTS(X)						\
	/* guest_memfd and memslots naming it (kvm_uapi.h) */		\
	X(sz_region2, sizeof(struct kvm_userspace_memory_region2))	\
	X(off_region2_gpa, offsetof(struct kvm_userspace_memory_region2, guest_phys_addr)) \
	X(off_region2_size, offsetof(struct kvm_userspace_memory_region2, memory_size)) \
	X(off_region2_uaddr, offsetof(struct kvm_userspace_memory_region2, userspace_addr)) \
	X(off_region2_gmem_off, offsetof(struct kvm_userspace_memory_region2, guest_memfd_offset)) \
	X(off_region2_gmem, offsetof(struct kvm_userspace_memory_region2, guest_memfd)) \
	X(KVM_SET_USER_MEMORY_REGION2, KVM_SET_USER_MEMORY_REGION2)	\
	X(KVM_MEM_GUEST_MEMFD, KVM_MEM_GUEST_MEMFD)			\
	X(sz_create_gmem, sizeof(struct kvm_create_guest_memfd))	\
	X(off_create_gmem_flags, offsetof(struct kvm_create_guest_memfd, flags)) \
	X(KVM_CREATE_GUEST_MEMFD, KVM_CREATE_GUEST_MEMFD)		\
	X(GUEST_MEMFD_FLAG_MMAP, GUEST_MEMFD_FLAG_MMAP)			\
	X(GUEST_MEMFD_FLAG_INIT_SHARED, GUEST_MEMFD_FLAG_INIT_SHARED)	\
	X(KVM_CAP_USER_MEMORY2, KVM_CAP_USER_MEMORY2)			\
	X(KVM_CAP_MEMORY_ATTRIBUTES, KVM_CAP_MEMORY_ATTRIBUTES)		\
	X(KVM_CAP_GUEST_MEMFD, KVM_CAP_GUEST_MEMFD)			\
	X(KVM_CAP_VM_TYPES, KVM_CAP_VM_TYPES)				\
	X(KVM_CAP_GUEST_MEMFD_FLAGS, KVM_CAP_GUEST_MEMFD_FLAGS)		\
	/* the project's kernel patch: KVM_LINK_GUEST_MEMFD */		\
	X(sz_link_gmem, sizeof(struct kvm_link_guest_memfd))		\
	X(off_link_gmem_flags, offsetof(struct kvm_link_guest_memfd, flags)) \
	X(KVM_LINK_GUEST_MEMFD, KVM_LINK_GUEST_MEMFD)			\
	X(KVM_CAP_GUEST_MEMFD_LINK, KVM_CAP_GUEST_MEMFD_LINK)		\
	/* vCPU state the VMM saves; from the system headers */	\
	X(sz_regs, sizeof(struct kvm_regs))				\
	X(sz_sregs, sizeof(struct kvm_sregs))				\
	X(sz_sregs2, sizeof(struct kvm_sregs2))				\
	X(sz_xsave, sizeof(struct kvm_xsave))				\
	X(sz_xcrs, sizeof(struct kvm_xcrs))				\
	X(sz_debugregs, sizeof(struct kvm_debugregs))			\
	X(sz_lapic, sizeof(struct kvm_lapic_state))			\
	X(sz_vcpu_events, sizeof(struct kvm_vcpu_events))		\
	X(sz_mp_state, sizeof(struct kvm_mp_state))			\
	X(sz_clock, sizeof(struct kvm_clock_data))			\
	X(sz_pit2, sizeof(struct kvm_pit_state2))			\
	X(sz_irqchip, sizeof(struct kvm_irqchip))			\
	X(sz_msrs, sizeof(struct kvm_msrs))				\
	X(sz_msr_entry, sizeof(struct kvm_msr_entry))			\
	X(sz_cpuid2, sizeof(struct kvm_cpuid2))				\
	X(sz_cpuid_entry2, sizeof(struct kvm_cpuid_entry2))		\
	X(sz_run, sizeof(struct kvm_run))				\
	X(KVM_GET_SREGS2, KVM_GET_SREGS2)				\
	X(KVM_SET_SREGS2, KVM_SET_SREGS2)				\
	X(KVM_GET_XSAVE2, KVM_GET_XSAVE2)				\
	X(KVM_CAP_XSAVE2, KVM_CAP_XSAVE2)				\
	X(KVM_CAP_SREGS2, KVM_CAP_SREGS2)				\
	X(KVM_GET_CLOCK, KVM_GET_CLOCK)					\
	X(KVM_SET_CLOCK, KVM_SET_CLOCK)					\
	X(KVM_CLOCK_REALTIME, KVM_CLOCK_REALTIME)			\
	X(KVM_KVMCLOCK_CTRL, KVM_KVMCLOCK_CTRL)				\
	X(KVM_VCPU_TSC_CTRL, KVM_VCPU_TSC_CTRL)				\
	X(KVM_VCPU_TSC_OFFSET, KVM_VCPU_TSC_OFFSET)			\
	X(KVM_GET_VCPU_EVENTS, KVM_GET_VCPU_EVENTS)			\
	X(KVM_SET_MSRS, KVM_SET_MSRS)					\
	X(KVM_GET_MSR_INDEX_LIST, KVM_GET_MSR_INDEX_LIST)		\
	X(KVM_RUN, KVM_RUN)						\
	/* /dev/liveupdate (liveupdate_uapi.h) */			\
	X(LIVEUPDATE_IOCTL_TYPE, LIVEUPDATE_IOCTL_TYPE)			\
	X(LIVEUPDATE_SESSION_NAME_LENGTH, LIVEUPDATE_SESSION_NAME_LENGTH) \
	X(sz_lu_create, sizeof(struct liveupdate_ioctl_create_session))	\
	X(off_lu_create_fd, offsetof(struct liveupdate_ioctl_create_session, fd)) \
	X(off_lu_create_name, offsetof(struct liveupdate_ioctl_create_session, name)) \
	X(sz_lu_retrieve, sizeof(struct liveupdate_ioctl_retrieve_session)) \
	X(off_lu_retrieve_name, offsetof(struct liveupdate_ioctl_retrieve_session, name)) \
	X(sz_lu_preserve, sizeof(struct liveupdate_session_preserve_fd)) \
	X(off_lu_preserve_token, offsetof(struct liveupdate_session_preserve_fd, token)) \
	X(sz_lu_retrieve_fd, sizeof(struct liveupdate_session_retrieve_fd)) \
	X(off_lu_retrieve_fd_token, offsetof(struct liveupdate_session_retrieve_fd, token)) \
	X(sz_lu_finish, sizeof(struct liveupdate_session_finish))	\
	X(sz_lu_get_name, sizeof(struct liveupdate_session_get_name))	\
	X(off_lu_get_name_name, offsetof(struct liveupdate_session_get_name, name)) \
	X(LIVEUPDATE_IOCTL_CREATE_SESSION, LIVEUPDATE_IOCTL_CREATE_SESSION) \
	X(LIVEUPDATE_IOCTL_RETRIEVE_SESSION, LIVEUPDATE_IOCTL_RETRIEVE_SESSION) \
	X(LIVEUPDATE_SESSION_PRESERVE_FD, LIVEUPDATE_SESSION_PRESERVE_FD) \
	X(LIVEUPDATE_SESSION_RETRIEVE_FD, LIVEUPDATE_SESSION_RETRIEVE_FD) \
	X(LIVEUPDATE_SESSION_FINISH, LIVEUPDATE_SESSION_FINISH)		\
	X(LIVEUPDATE_SESSION_GET_NAME, LIVEUPDATE_SESSION_GET_NAME)

#endif /* KVMLU_UAPI_FACTS_H */

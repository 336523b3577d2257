/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this machine's KVM and kernel offer the tests, probed the way the
 * kernel answers (KVM_CHECK_EXTENSION, the device node, the THP setting),
 * never guessed from a device node alone: /dev/kvm exists on machines
 * whose KVM has no guest_memfd. Shared by the unit tests
 * (tests/unit/need_cap.h) and kvmlu-test-caps (tests/caps/kvmlu_test_caps.c),
 * which the native tests and the harness ask. A test that needs what the
 * machine lacks does not fail here: it runs in the QEMU host, whose kernel
 * is the project's, and says so.
 *
 * Independent of vmm/kvm.c on purpose: the unit tests check the VMM's own
 * capability check against these answers.
 */
#ifndef KVMLU_TESTS_CAPS_H
#define KVMLU_TESTS_CAPS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvmlu/kvm_uapi.h"

#define CAPS_KVM_DEV "/dev/kvm"
#define CAPS_LUO_DEV "/dev/liveupdate"
#define CAPS_THP_SHMEM "/sys/kernel/mm/transparent_hugepage/shmem_enabled"

/* /dev/kvm opened read-write, API version 12: 1, else 0 and why. */
static inline int caps_kvm_open(int *fd, char *why, size_t len)
{
	int ver;

	*fd = open(CAPS_KVM_DEV, O_RDWR | O_CLOEXEC);
	if (*fd < 0) {
		snprintf(why, len, "open %s: %s", CAPS_KVM_DEV, strerror(errno));
		return 0;
	}
	ver = ioctl(*fd, KVM_GET_API_VERSION, 0);
	if (ver != KVM_API_VERSION) {
		snprintf(why, len, "%s: KVM_GET_API_VERSION is %d, not %d",
			 CAPS_KVM_DEV, ver, KVM_API_VERSION);
		close(*fd);
		*fd = -1;
		return 0;
	}
	return 1;
}

static inline int caps_kvm(char *why, size_t len)
{
	int fd;

	if (!caps_kvm_open(&fd, why, len))
		return 0;
	close(fd);
	return 1;
}

static inline int caps_check_extension(int fd, long cap)
{
	int r = ioctl(fd, KVM_CHECK_EXTENSION, cap);

	return r < 0 ? 0 : r;
}

/*
 * What kvmlu's guest_memfd backend needs: the guest_memfd itself, memslots
 * that name one, and files the VMM can mmap with every page shared from
 * the start (vmm/kvm.c asks the same of a VM with --memory-backend guest_memfd).
 */
static inline int caps_guest_memfd(char *why, size_t len)
{
	const int need = (int)(GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED);
	int fd, ok = 0, flags;

	if (!caps_kvm_open(&fd, why, len))
		return 0;
	if (!caps_check_extension(fd, KVM_CAP_GUEST_MEMFD))
		snprintf(why, len, "KVM lacks KVM_CAP_GUEST_MEMFD (%d)", KVM_CAP_GUEST_MEMFD);
	else if (!caps_check_extension(fd, KVM_CAP_USER_MEMORY2))
		snprintf(why, len, "KVM lacks KVM_CAP_USER_MEMORY2 (%d)", KVM_CAP_USER_MEMORY2);
	else if (((flags = caps_check_extension(fd, KVM_CAP_GUEST_MEMFD_FLAGS)) & need) != need)
		snprintf(why, len, "KVM_CAP_GUEST_MEMFD_FLAGS (%d) is %#x, not MMAP|INIT_SHARED (%#x)",
			 KVM_CAP_GUEST_MEMFD_FLAGS, flags, need);
	else
		ok = 1;
	close(fd);
	return ok;
}

/* The kernel's Live Update Orchestrator: /dev/liveupdate, a char device. */
static inline int caps_liveupdate(char *why, size_t len)
{
	struct stat st;

	if (stat(CAPS_LUO_DEV, &st)) {
		snprintf(why, len, "no %s: %s", CAPS_LUO_DEV, strerror(errno));
		return 0;
	}
	if (!S_ISCHR(st.st_mode)) {
		snprintf(why, len, "%s is not a character device", CAPS_LUO_DEV);
		return 0;
	}
	return 1;
}

/*
 * 2 MiB shmem folios for memfd RAM: shmem_enabled's chosen word ([...]) is
 * one that gives them to a mapping that asks (guestmem/folio.c).
 */
static inline int caps_thp_shmem(char *why, size_t len)
{
	static const char *const huge[] = { "always", "within_size", "advise", "force" };
	char buf[256], *l, *r;
	size_t n, i;
	FILE *f = fopen(CAPS_THP_SHMEM, "re");

	if (!f) {
		snprintf(why, len, "no %s: %s", CAPS_THP_SHMEM, strerror(errno));
		return 0;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (!r) {
		snprintf(why, len, "%s has no [chosen] word", CAPS_THP_SHMEM);
		return 0;
	}
	*r = '\0';
	for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++)
		if (!strcmp(l + 1, huge[i]))
			return 1;
	snprintf(why, len, "%s is %s", CAPS_THP_SHMEM, l + 1);
	return 0;
}

struct caps_probe {
	const char *name;
	int (*have)(char *why, size_t len);
};

static const struct caps_probe caps_probes[] = {
	{ "kvm", caps_kvm },
	{ "guest_memfd", caps_guest_memfd },
	{ "liveupdate", caps_liveupdate },
	{ "thp_shmem", caps_thp_shmem },
};

/* 1 present, 0 absent (why says what is missing), -EINVAL unknown name. */
static inline int caps_have(const char *name, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(caps_probes) / sizeof(caps_probes[0]); i++)
		if (!strcmp(caps_probes[i].name, name))
			return caps_probes[i].have(why, len);
	snprintf(why, len, "unknown capability '%s'", name);
	return -EINVAL;
}

#endif /* KVMLU_TESTS_CAPS_H */

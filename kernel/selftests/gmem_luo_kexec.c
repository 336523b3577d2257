// SPDX-License-Identifier: GPL-2.0
/*
 * gmem_luo_kexec: the kernel-side test of guest_memfd preservation through
 * LUO (kernel/patches/, CONFIG_LIVEUPDATE_GUEST_MEMFD, KVM_LINK_GUEST_MEMFD).
 * Two stages across a kexec, like tools/testing/selftests/liveupdate.
 *
 * Stage 1 (-s 1): a VM with a shared guest_memfd (MMAP|INIT_SHARED) gets a
 *   pattern written through mmap; a second VM linked to the same memory
 *   (KVM_LINK_GUEST_MEMFD) checks it from inside a guest. The refusals are
 *   checked: a private guest_memfd (no INIT_SHARED) is EOPNOTSUPP, a
 *   preserved one refuses PUNCH_HOLE with EPERM. The guest_memfd goes into
 *   session "gmem-selftest"; a forked child keeps the session fd open and
 *   the caller kexecs.
 * Stage 2 (-s 2): the session is retrieved, the guest_memfd is retrieved
 *   unbound (a memslot refuses it: EINVAL), linked to a new VM, and a guest
 *   in that VM checks the pattern and writes a marker the host then sees;
 *   the host checks every byte too. FINISH ends the session.
 * Bench (-b MiB, -s 1 / -s 2): PRESERVE_FD and RETRIEVE_FD times of a
 *   guest_memfd and a memfd of that size, in the same run, as "BENCH" lines.
 *
 * Stage 0 (-s 0): only the guest check, on the VM that created the
 *   guest_memfd: a smoke test of this program on any kernel with guest_memfd.
 *
 * Ends with one line "TEST PASSED" or "TEST FAILED: why"; exit 0 / 1, and
 * 4 with "TEST SKIPPED: why" when the kernel lacks what it tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/kvm.h>
#include <linux/liveupdate.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SESSION_NAME	"gmem-selftest"
#define BENCH_SESSION	"gmem-bench"
#define TOKEN_GMEM	1
#define TOKEN_MEMFD	2
#define TOKEN_UNRETRIEVED 3
#define GMEM_SIZE	(2UL << 20)
#define GMEM_GPA	0x100000UL
#define CODE_SIZE	0x10000UL
#define PATTERN_SEED	0x6b766d6cU	/* "kvml" */
#define PATTERN_STEP	0x9e3779b1U
#define GUEST_MARKER	0x600dcafeU
#define PORT_MISMATCH	0x10
#define PORT_MARKER	0x11

/*
 * The guest: 32-bit flat protected mode, no paging, set up by the host
 * through KVM_SET_SREGS so that no GDT is needed. For each page of the
 * guest_memfd slot it compares the first and the last dword with the
 * pattern, reports the mismatch count on PORT_MISMATCH, writes
 * GUEST_MARKER at offset 8 of the slot, reports it on PORT_MARKER, halts.
 * In: ebx = slot GPA, ecx = pages, edx = pattern of page 0's first dword,
 * edi = pattern step from one page to the next.
 */
extern const unsigned char guest_code[], guest_code_end[];
__asm__(
	".pushsection .rodata\n"
	".code32\n"
	"guest_code:\n"
	"	mov %ebx, %esi\n"
	"	xor %ebp, %ebp\n"
	"1:	cmp %edx, (%esi)\n"
	"	je 2f\n"
	"	inc %ebp\n"
	"2:	mov 4092(%esi), %eax\n"
	"	sub %edx, %eax\n"
	"	cmp $((1023 * 0x9e3779b1) & 0xffffffff), %eax\n"
	"	je 3f\n"
	"	inc %ebp\n"
	"3:	add %edi, %edx\n"
	"	add $4096, %esi\n"
	"	dec %ecx\n"
	"	jnz 1b\n"
	"	mov %ebp, %eax\n"
	"	out %eax, $0x10\n"
	"	mov $0x600dcafe, %eax\n"
	"	mov %eax, 8(%ebx)\n"
	"	out %eax, $0x11\n"
	"	hlt\n"
	"guest_code_end:\n"
	".code64\n"
	".popsection\n");

static int stage;

static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("TEST FAILED: stage %d: ", stage);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

static void skip(const char *why)
{
	printf("TEST SKIPPED: %s\n", why);
	exit(4);
}

static void say(const char *fmt, ...)
{
	va_list ap;

	printf("gmem_luo_kexec: stage %d: ", stage);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static uint32_t pattern_at(size_t off)
{
	return PATTERN_SEED + (uint32_t)(off / 4) * PATTERN_STEP;
}

static void pattern_write(uint32_t *p, size_t size)
{
	for (size_t i = 0; i < size / 4; i++)
		p[i] = pattern_at(i * 4);
}

/* Returns the offset of the first wrong dword, or size if all are right. */
static size_t pattern_check(const uint32_t *p, size_t size, size_t skip_off)
{
	for (size_t i = 0; i < size / 4; i++)
		if (i * 4 != skip_off && p[i] != pattern_at(i * 4))
			return i * 4;
	return size;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int kvm_open(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (kvm < 0)
		skip("no /dev/kvm");
	if (stage && ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_GUEST_MEMFD_LINK) <= 0)
		skip("KVM_CAP_GUEST_MEMFD_LINK missing: kernel without the kvmlu guest_memfd patches");
	return kvm;
}

static int vm_create(int kvm)
{
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);

	if (vm < 0)
		fail("KVM_CREATE_VM: %s", strerror(errno));
	return vm;
}

static int gmem_create(int vm, size_t size, uint64_t flags)
{
	struct kvm_create_guest_memfd args = { .size = size, .flags = flags };
	int fd = ioctl(vm, KVM_CREATE_GUEST_MEMFD, &args);

	if (fd < 0)
		fail("KVM_CREATE_GUEST_MEMFD size %zu flags %#llx: %s", size,
		     (unsigned long long)flags, strerror(errno));
	return fd;
}

static int gmem_link(int vm, int gmem)
{
	struct kvm_link_guest_memfd args = { .fd = gmem };
	int fd = ioctl(vm, KVM_LINK_GUEST_MEMFD, &args);

	if (fd < 0)
		fail("KVM_LINK_GUEST_MEMFD fd %d: %s", gmem, strerror(errno));
	return fd;
}

static void *map_fd(int fd, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		fail("mmap fd %d size %zu: %s", fd, size, strerror(errno));
	return p;
}

static int set_slot(int vm, uint32_t slot, uint64_t gpa, size_t size,
		    void *hva, int gmem)
{
	struct kvm_userspace_memory_region2 r = {
		.slot = slot,
		.flags = gmem >= 0 ? KVM_MEM_GUEST_MEMFD : 0,
		.guest_phys_addr = gpa,
		.memory_size = size,
		.userspace_addr = (uintptr_t)hva,
		.guest_memfd = gmem >= 0 ? (uint32_t)gmem : 0,
	};

	return ioctl(vm, KVM_SET_USER_MEMORY_REGION2, &r) ? -errno : 0;
}

static void seg_flat(struct kvm_segment *s, uint16_t sel, uint8_t type)
{
	*s = (struct kvm_segment){ .base = 0, .limit = 0xffffffff,
		.selector = sel, .type = type, .present = 1, .db = 1, .s = 1,
		.g = 1 };
}

/*
 * Runs the guest in @vm over the guest_memfd @gmem (a file of @vm) mapped at
 * @hva, and returns the mismatch count it reports; fails on anything else.
 */
static uint32_t guest_check(int kvm, int vm, int gmem, void *hva, size_t size)
{
	uint32_t mismatches = UINT32_MAX, marker = 0;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct kvm_run *run;
	int vcpu, run_size;
	void *code;

	code = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		fail("mmap guest code: %s", strerror(errno));
	memcpy(code, guest_code, guest_code_end - guest_code);
	if (set_slot(vm, 0, 0, CODE_SIZE, code, -1))
		fail("memslot 0 (code): %s", strerror(errno));
	if (set_slot(vm, 1, GMEM_GPA, size, hva, gmem))
		fail("memslot 1 (guest_memfd %d): %s", gmem, strerror(errno));

	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		fail("KVM_CREATE_VCPU: %s", strerror(errno));
	run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		fail("mmap kvm_run: %s", strerror(errno));

	if (ioctl(vcpu, KVM_GET_SREGS, &sregs))
		fail("KVM_GET_SREGS: %s", strerror(errno));
	seg_flat(&sregs.cs, 0x8, 0xb);
	seg_flat(&sregs.ds, 0x10, 0x3);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.cr0 |= 1;		/* PE, no PG */
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs))
		fail("KVM_SET_SREGS: %s", strerror(errno));
	memset(&regs, 0, sizeof(regs));
	regs.rflags = 2;
	regs.rip = 0;
	regs.rbx = GMEM_GPA;
	regs.rcx = size / 4096;
	regs.rdx = pattern_at(0);
	regs.rdi = (uint32_t)(1024 * PATTERN_STEP);
	if (ioctl(vcpu, KVM_SET_REGS, &regs))
		fail("KVM_SET_REGS: %s", strerror(errno));

	for (;;) {
		if (ioctl(vcpu, KVM_RUN, 0) && errno != EINTR)
			fail("KVM_RUN: %s", strerror(errno));
		if (run->exit_reason == KVM_EXIT_HLT)
			break;
		if (run->exit_reason != KVM_EXIT_IO ||
		    run->io.direction != KVM_EXIT_IO_OUT || run->io.size != 4)
			fail("guest exit reason %u", run->exit_reason);
		uint32_t v;

		memcpy(&v, (char *)run + run->io.data_offset, 4);
		if (run->io.port == PORT_MISMATCH)
			mismatches = v;
		else if (run->io.port == PORT_MARKER)
			marker = v;
		else
			fail("guest wrote %#x to port %#x", v, run->io.port);
	}
	if (marker != GUEST_MARKER)
		fail("guest reported marker %#x, not %#x", marker, GUEST_MARKER);
	if (((uint32_t *)hva)[2] != GUEST_MARKER)
		fail("the guest's write is not in the host mapping: %#x",
		     ((uint32_t *)hva)[2]);
	munmap(run, run_size);
	close(vcpu);
	return mismatches;
}

static int luo_open(void)
{
	int fd = open("/dev/liveupdate", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		skip("no /dev/liveupdate (boot with liveupdate=on)");
	return fd;
}

static int session_create(int luo, const char *name)
{
	struct liveupdate_ioctl_create_session a = { .size = sizeof(a) };

	snprintf((char *)a.name, sizeof(a.name), "%s", name);
	if (ioctl(luo, LIVEUPDATE_IOCTL_CREATE_SESSION, &a))
		fail("CREATE_SESSION %s: %s", name, strerror(errno));
	return a.fd;
}

static int session_retrieve(int luo, const char *name)
{
	struct liveupdate_ioctl_retrieve_session a = { .size = sizeof(a) };

	snprintf((char *)a.name, sizeof(a.name), "%s", name);
	if (ioctl(luo, LIVEUPDATE_IOCTL_RETRIEVE_SESSION, &a))
		fail("RETRIEVE_SESSION %s: %s", name, strerror(errno));
	return a.fd;
}

static int preserve_fd(int session, int fd, uint64_t token)
{
	struct liveupdate_session_preserve_fd a = {
		.size = sizeof(a), .fd = fd, .token = token };

	return ioctl(session, LIVEUPDATE_SESSION_PRESERVE_FD, &a) ? -errno : 0;
}

static int retrieve_fd(int session, uint64_t token)
{
	struct liveupdate_session_retrieve_fd a = {
		.size = sizeof(a), .token = token };

	if (ioctl(session, LIVEUPDATE_SESSION_RETRIEVE_FD, &a))
		fail("RETRIEVE_FD token %llu: %s", (unsigned long long)token,
		     strerror(errno));
	return a.fd;
}

static void session_finish(int session)
{
	struct liveupdate_session_finish a = { .size = sizeof(a) };

	if (ioctl(session, LIVEUPDATE_SESSION_FINISH, &a))
		fail("SESSION_FINISH: %s", strerror(errno));
}

/* Keeps the sessions (open fds) alive in a child until the kexec. */
static void hold_and_exit(void)
{
	pid_t pid = fork();

	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid > 0) {
		printf("gmem_luo_kexec: stage 1: child %d holds the session; kexec now\n",
		       pid);
		exit(0);
	}
	setsid();
	for (;;)
		pause();
}

static int link_raw(int vm, int fd, uint32_t flags)
{
	struct kvm_link_guest_memfd args = { .fd = fd, .flags = flags };
	int r = ioctl(vm, KVM_LINK_GUEST_MEMFD, &args);

	if (r >= 0) {
		close(r);
		return 0;
	}
	return -errno;
}

/* KVM_LINK_GUEST_MEMFD refuses what must not get a second owner. */
static void link_refusals(int vm)
{
	int kvm2 = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm2, priv, memfd, err;

	vm2 = vm_create(kvm2);
	priv = gmem_create(vm, 1UL << 20, GUEST_MEMFD_FLAG_MMAP);
	err = link_raw(vm2, priv, 0);
	if (err != -EOPNOTSUPP)
		fail("linking a private guest_memfd gave %d, not -EOPNOTSUPP", err);
	close(priv);
	memfd = memfd_create("not-gmem", 0);
	err = link_raw(vm2, memfd, 0);
	if (err != -EINVAL)
		fail("linking a memfd gave %d, not -EINVAL", err);
	close(memfd);
	priv = gmem_create(vm, 1UL << 20,
			   GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED);
	err = link_raw(vm2, priv, 1);
	if (err != -EINVAL)
		fail("KVM_LINK_GUEST_MEMFD with flags 1 gave %d, not -EINVAL", err);
	err = link_raw(vm2, 12345, 0);
	if (err != -EBADF)
		fail("linking a closed fd gave %d, not -EBADF", err);
	close(priv);
	close(vm2);
	close(kvm2);
	say("KVM_LINK_GUEST_MEMFD refused private (EOPNOTSUPP), memfd and flags (EINVAL), bad fd (EBADF)");
}

/* Closing a session before kexec gives the guest_memfd back as it was. */
static void unpreserve_restores(int luo)
{
	const uint64_t shared = GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED;
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm, gmem, session, err;
	uint32_t *mem;

	vm = vm_create(kvm);
	gmem = gmem_create(vm, 1UL << 20, shared);
	mem = map_fd(gmem, 1UL << 20);
	pattern_write(mem, 1UL << 20);
	session = session_create(luo, "gmem-selftest-abort");
	err = preserve_fd(session, gmem, 7);
	if (err)
		fail("PRESERVE_FD (abort test): %s", strerror(-err));
	close(session);
	if (pattern_check(mem, 1UL << 20, SIZE_MAX) != 1UL << 20)
		fail("pattern changed by preserve + unpreserve");
	if (fallocate(gmem, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096))
		fail("PUNCH_HOLE after the session was closed: %s", strerror(errno));
	if (mem[0] != 0)
		fail("punched page reads %#x, not 0", mem[0]);
	munmap(mem, 1UL << 20);
	close(gmem);
	close(vm);
	close(kvm);
	say("closing the session unpreserved it: pattern kept, PUNCH_HOLE works again");
}

static void stage1(void)
{
	const uint64_t shared = GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED;
	int kvm, vm, vm2, gmem, link, priv, luo, session, err;
	uint32_t *mem, *mem2;
	uint32_t bad;

	kvm = kvm_open();
	vm = vm_create(kvm);
	gmem = gmem_create(vm, GMEM_SIZE, shared);
	mem = map_fd(gmem, GMEM_SIZE);
	pattern_write(mem, GMEM_SIZE);
	say("pattern written to a %lu KiB guest_memfd", GMEM_SIZE >> 10);

	/* The same memory, viewed by another VM, without a copy. */
	vm2 = vm_create(kvm);
	link = gmem_link(vm2, gmem);
	mem2 = map_fd(link, GMEM_SIZE);
	bad = guest_check(kvm, vm2, link, mem2, GMEM_SIZE);
	if (bad)
		fail("linked VM's guest found %u wrong dwords", bad);
	say("linked VM's guest read the pattern and wrote its marker");
	mem[2] = pattern_at(8);	/* undo the marker */
	munmap(mem2, GMEM_SIZE);
	close(link);
	close(vm2);

	luo = luo_open();
	session = session_create(luo, SESSION_NAME);

	priv = gmem_create(vm, 1UL << 20, 0);
	err = preserve_fd(session, priv, 99);
	if (err != -EOPNOTSUPP)
		fail("preserving a private guest_memfd gave %d, not -EOPNOTSUPP", err);
	close(priv);
	priv = gmem_create(vm, 1UL << 20, GUEST_MEMFD_FLAG_MMAP);
	err = preserve_fd(session, priv, 98);
	if (err != -EOPNOTSUPP)
		fail("preserving an MMAP-only (private) guest_memfd gave %d, not -EOPNOTSUPP",
		     err);
	close(priv);
	say("private guest_memfd refused with EOPNOTSUPP");

	link_refusals(vm);
	unpreserve_restores(luo);

	/* Left unretrieved in stage 2: FINISH has to free it. */
	priv = gmem_create(vm, 1UL << 20, shared);
	err = preserve_fd(session, priv, TOKEN_UNRETRIEVED);
	if (err)
		fail("PRESERVE_FD second guest_memfd: %s", strerror(-err));

	err = preserve_fd(session, gmem, TOKEN_GMEM);
	if (err)
		fail("PRESERVE_FD guest_memfd: %s", strerror(-err));
	if (!fallocate(gmem, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) ||
	    errno != EPERM)
		fail("PUNCH_HOLE on a preserved guest_memfd: %s, not EPERM",
		     strerror(errno));
	say("guest_memfd preserved; PUNCH_HOLE refused with EPERM");
	if (pattern_check(mem, GMEM_SIZE, SIZE_MAX) != GMEM_SIZE)
		fail("pattern changed by preservation");
	munmap(mem, GMEM_SIZE);
	close(luo);
	hold_and_exit();
}

static void stage2(void)
{
	int kvm, vm, luo, session, gmem, link;
	uint32_t *mem;
	size_t off;
	struct stat st;
	uint32_t bad;

	kvm = kvm_open();
	luo = luo_open();
	session = session_retrieve(luo, SESSION_NAME);
	gmem = retrieve_fd(session, TOKEN_GMEM);
	if (fstat(gmem, &st))
		fail("fstat retrieved guest_memfd: %s", strerror(errno));
	if ((size_t)st.st_size != GMEM_SIZE)
		fail("retrieved guest_memfd has size %lld, not %lu",
		     (long long)st.st_size, GMEM_SIZE);
	say("guest_memfd retrieved, size %lld", (long long)st.st_size);

	mem = map_fd(gmem, GMEM_SIZE);
	off = pattern_check(mem, GMEM_SIZE, SIZE_MAX);
	if (off != GMEM_SIZE)
		fail("pattern lost at offset %zu: %#x, not %#x", off, mem[off / 4],
		     pattern_at(off));
	say("host mapping of the retrieved guest_memfd holds the pattern");

	vm = vm_create(kvm);
	/* Retrieved memory belongs to no VM until it is linked. */
	if (set_slot(vm, 1, GMEM_GPA, GMEM_SIZE, mem, gmem) != -EINVAL)
		fail("a memslot took the unlinked retrieved guest_memfd");
	link = gmem_link(vm, gmem);
	bad = guest_check(kvm, vm, link, mem, GMEM_SIZE);
	if (bad)
		fail("guest found %u wrong dwords after kexec", bad);
	off = pattern_check(mem, GMEM_SIZE, 8);
	if (off != GMEM_SIZE)
		fail("pattern changed by the guest run at offset %zu", off);
	say("new VM's guest read the pattern after kexec and wrote its marker");

	munmap(mem, GMEM_SIZE);
	close(link);
	close(vm);
	close(gmem);
	session_finish(session);
	say("FINISH with one guest_memfd left unretrieved");
	close(session);
	close(luo);
}

static void stage0(void)
{
	const uint64_t shared = GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED;
	int kvm = kvm_open(), vm = vm_create(kvm);
	int gmem = gmem_create(vm, GMEM_SIZE, shared);
	uint32_t *mem = map_fd(gmem, GMEM_SIZE);
	uint32_t bad;

	pattern_write(mem, GMEM_SIZE);
	bad = guest_check(kvm, vm, gmem, mem, GMEM_SIZE);
	if (bad)
		fail("guest found %u wrong dwords", bad);
	/* A guest that cannot fail is no test: break one page, expect 1. */
	munmap(mem, GMEM_SIZE);
	close(gmem);
	close(vm);

	vm = vm_create(kvm);
	gmem = gmem_create(vm, GMEM_SIZE, shared);
	mem = map_fd(gmem, GMEM_SIZE);
	pattern_write(mem, GMEM_SIZE);
	mem[4096 * 5 / 4] ^= 1;
	bad = guest_check(kvm, vm, gmem, mem, GMEM_SIZE);
	if (bad != 1)
		fail("guest found %u wrong dwords in a pattern with one, not 1", bad);
	say("guest sees the pattern and a one-dword change in it");
}

/* Bench: -b MiB. Same session holds a guest_memfd and a memfd of MiB each. */
static void bench(size_t mib)
{
	const uint64_t shared = GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED;
	size_t size = mib << 20;
	int kvm, vm, luo, session, gmem, memfd, err;
	double t0, t_gmem, t_memfd;
	void *p;

	kvm = kvm_open();
	luo = luo_open();
	if (stage == 2) {
		session = session_retrieve(luo, BENCH_SESSION);
		t0 = now_ms();
		gmem = retrieve_fd(session, TOKEN_GMEM);
		t_gmem = now_ms() - t0;
		t0 = now_ms();
		memfd = retrieve_fd(session, TOKEN_MEMFD);
		t_memfd = now_ms() - t0;
		printf("BENCH retrieve guest_memfd %zu MiB %.1f ms (%.1f ms/GiB)\n",
		       mib, t_gmem, t_gmem * 1024 / mib);
		printf("BENCH retrieve memfd %zu MiB %.1f ms (%.1f ms/GiB)\n",
		       mib, t_memfd, t_memfd * 1024 / mib);
		close(gmem);
		close(memfd);
		session_finish(session);
		return;
	}
	vm = vm_create(kvm);
	gmem = gmem_create(vm, size, shared);
	p = map_fd(gmem, size);
	memset(p, 0x5a, size);
	munmap(p, size);
	memfd = memfd_create("bench", 0);
	if (memfd < 0 || ftruncate(memfd, size))
		fail("memfd of %zu MiB: %s", mib, strerror(errno));
	p = map_fd(memfd, size);
	memset(p, 0x5a, size);
	munmap(p, size);

	session = session_create(luo, BENCH_SESSION);
	t0 = now_ms();
	err = preserve_fd(session, gmem, TOKEN_GMEM);
	t_gmem = now_ms() - t0;
	if (err)
		fail("PRESERVE_FD guest_memfd %zu MiB: %s", mib, strerror(-err));
	t0 = now_ms();
	err = preserve_fd(session, memfd, TOKEN_MEMFD);
	t_memfd = now_ms() - t0;
	if (err)
		fail("PRESERVE_FD memfd %zu MiB: %s", mib, strerror(-err));
	printf("BENCH preserve guest_memfd %zu MiB %.1f ms (%.1f ms/GiB)\n",
	       mib, t_gmem, t_gmem * 1024 / mib);
	printf("BENCH preserve memfd %zu MiB %.1f ms (%.1f ms/GiB)\n",
	       mib, t_memfd, t_memfd * 1024 / mib);
	close(luo);
	fflush(stdout);
	hold_and_exit();
}

int main(int argc, char **argv)
{
	size_t bench_mib = 0;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "s:b:")) != -1) {
		if (opt == 's')
			stage = atoi(optarg);
		else if (opt == 'b')
			bench_mib = strtoul(optarg, NULL, 10);
		else
			stage = 0;
	}
	if (stage < 0 || stage > 2 || (stage == 0 && optind == 1)) {
		fprintf(stderr, "usage: %s -s 0|1|2 [-b MiB]\n", argv[0]);
		return 2;
	}
	if (bench_mib) {
		bench(bench_mib);
		return 0;
	}
	if (stage == 0)
		stage0();
	else if (stage == 1)
		stage1();
	else
		stage2();
	printf("TEST PASSED\n");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of guestmem/guestmem.c with the memfd backend
 * (memfd_backend.c): files are real shmem memfds, mapped shared; adopt
 * takes over files as a new VMM process would and refuses files that LUO
 * could not preserve or that are too small. Needs no KVM.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guestmem/guestmem.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static char err[512];

/* How many mappings of files whose name contains tag this process has. */
static int count_mappings(const char *tag)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, tag))
			n++;
	fclose(f);
	return n;
}

static int fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_memfd_create_makes_shared_sealed_files_without_cloexec(void **state)
{
	struct guestmem gm;
	char path[64], link[256], back[16];
	ssize_t n;
	int seals;

	(void)state;
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 64 * MiB, -1, "t1", err, sizeof(err)), 0);
	assert_int_equal(gm.nr, 1);
	assert_int_equal(gm.backend, GUESTMEM_MEMFD);
	assert_true(gm.r[0].fd >= 0);
	assert_non_null(gm.r[0].hva);
	assert_int_equal(fcntl(gm.r[0].fd, F_GETFD) & FD_CLOEXEC, 0);

	seals = fcntl(gm.r[0].fd, F_GET_SEALS);
	assert_true(seals >= 0);
	assert_true(seals & F_SEAL_SHRINK);
	assert_true(seals & F_SEAL_GROW);
	assert_int_equal(ftruncate(gm.r[0].fd, 2 * MiB), -1);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", gm.r[0].fd);
	n = readlink(path, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_non_null(strstr(link, "memfd:kvmlu:t1:ram0"));

	/* What the guest would write through the mapping is in the file. */
	memcpy((char *)gm.r[0].hva + 64 * MiB - 16, "end-of-guest-ram", 16);
	assert_int_equal(pread(gm.r[0].fd, back, 16, (off_t)(64 * MiB - 16)), 16);
	assert_memory_equal(back, "end-of-guest-ram", 16);

	guestmem_destroy(&gm);
	assert_int_equal(gm.r[0].fd, -1);
	assert_null(gm.r[0].hva);
	guestmem_destroy(&gm);	/* twice is fine */
}

static void test_memfd_create_of_4g_maps_both_sides_of_the_hole(void **state)
{
	struct guestmem gm;
	char back[8];
	char *p;

	(void)state;
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 4 * GiB, -1, "t4g", err, sizeof(err)), 0);
	assert_int_equal(gm.nr, 2);
	assert_true(gm.r[0].fd != gm.r[1].fd);

	p = guestmem_gpa_to_hva(&gm, 3 * GiB - 8, 8);
	assert_non_null(p);
	memcpy(p, "lowedge!", 8);
	p = guestmem_gpa_to_hva(&gm, 4 * GiB, 8);
	assert_non_null(p);
	memcpy(p, "highbase", 8);
	assert_null(guestmem_gpa_to_hva(&gm, 3 * GiB, 8));

	assert_int_equal(pread(gm.r[0].fd, back, 8, (off_t)(3 * GiB - 8)), 8);
	assert_memory_equal(back, "lowedge!", 8);
	assert_int_equal(pread(gm.r[1].fd, back, 8, 0), 8);
	assert_memory_equal(back, "highbase", 8);
	guestmem_destroy(&gm);
}

static void test_memfd_create_rejects_bad_size_and_backend(void **state)
{
	struct guestmem gm;

	(void)state;
	err[0] = '\0';
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 3 * MiB, -1, "bad", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "3145728"));
	assert_int_equal(guestmem_create(&gm, (enum guestmem_backend)7, 4 * MiB, -1, "bad", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "backend 7"));
}

/* A second struct with the same plan, as the state FDT would give it. */
static void copy_plan(const struct guestmem *from, struct guestmem *to)
{
	unsigned int i;

	*to = *from;
	for (i = 0; i < to->nr; i++) {
		to->r[i].fd = 12345;	/* garbage adopt must not trust */
		to->r[i].hva = (void *)(uintptr_t)0x1234;
	}
}

static void test_memfd_adopt_maps_the_same_memory(void **state)
{
	struct guestmem gm, gm2;
	int fds[2];

	(void)state;
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 3 * GiB + 4 * MiB, -1, "adopt", err, sizeof(err)), 0);
	memcpy(guestmem_gpa_to_hva(&gm, 4096, 5), "hello", 5);
	memcpy(guestmem_gpa_to_hva(&gm, 4 * GiB + 8192, 5), "world", 5);

	copy_plan(&gm, &gm2);
	gm2.total = 0;	/* derived: a state FDT need not carry it */
	fds[0] = dup(gm.r[0].fd);
	fds[1] = dup(gm.r[1].fd);
	assert_int_equal(guestmem_adopt(&gm2, fds, err, sizeof(err)), 0);
	assert_true(gm2.total == 3 * GiB + 4 * MiB);
	assert_int_equal(gm2.r[0].fd, fds[0]);
	assert_true(gm2.r[0].hva != gm.r[0].hva);
	assert_memory_equal(guestmem_gpa_to_hva(&gm2, 4096, 5), "hello", 5);
	assert_memory_equal(guestmem_gpa_to_hva(&gm2, 4 * GiB + 8192, 5), "world", 5);

	/* Shared, not copied: a write through one mapping shows in the other. */
	memcpy(guestmem_gpa_to_hva(&gm2, 4096, 5), "HELLO", 5);
	assert_memory_equal(guestmem_gpa_to_hva(&gm, 4096, 5), "HELLO", 5);

	guestmem_destroy(&gm2);
	assert_false(fd_is_open(fds[0]));	/* adopted fds belong to gm2 */
	assert_false(fd_is_open(fds[1]));
	assert_true(fd_is_open(gm.r[0].fd));
	guestmem_destroy(&gm);
}

static void test_memfd_adopt_refuses_a_file_smaller_than_its_region(void **state)
{
	struct guestmem gm;
	int fd;

	(void)state;
	fd = memfd_create("small", 0);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * MiB), 0);
	assert_int_equal(guestmem_layout(4 * MiB, &gm), 0);
	gm.backend = GUESTMEM_MEMFD;
	err[0] = '\0';
	assert_int_equal(guestmem_adopt(&gm, &fd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "holds 2097152 bytes, region needs 4194304"));
	assert_int_equal(gm.r[0].fd, -1);
	assert_null(gm.r[0].hva);
	assert_true(fd_is_open(fd));	/* still the caller's */
	guestmem_destroy(&gm);
	assert_true(fd_is_open(fd));
	close(fd);
}

static void test_memfd_adopt_refuses_files_that_are_not_memfds(void **state)
{
	char shm[] = "/dev/shm/kvmlu-test-XXXXXX";
	char tmp[] = "/var/tmp/kvmlu-test-XXXXXX";
	struct guestmem gm;
	int p[2], fd;

	(void)state;
	assert_int_equal(guestmem_layout(2 * MiB, &gm), 0);
	gm.backend = GUESTMEM_MEMFD;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(guestmem_adopt(&gm, &p[0], err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a memfd"));
	close(p[0]);
	close(p[1]);

	/* tmpfs, but linked: LUO would refuse it at prepare-update. */
	fd = mkstemp(shm);
	if (fd >= 0) {
		assert_int_equal(ftruncate(fd, 2 * MiB), 0);
		assert_int_equal(guestmem_adopt(&gm, &fd, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "links"));
		unlink(shm);
		close(fd);
	}

	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * MiB), 0);
	assert_int_equal(guestmem_adopt(&gm, &fd, err, sizeof(err)), -EINVAL);
	unlink(tmp);
	close(fd);

	fd = -1;
	assert_int_equal(guestmem_adopt(&gm, &fd, err, sizeof(err)), -EBADF);
}

static void test_memfd_adopt_failing_on_region_2_leaves_nothing_mapped(void **state)
{
	struct guestmem gm, gm2;
	int fds[2];

	(void)state;
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 3 * GiB + 2 * MiB, -1, "halfway", err, sizeof(err)), 0);
	assert_int_equal(count_mappings("memfd:kvmlu:halfway:"), 2);
	copy_plan(&gm, &gm2);
	fds[0] = gm.r[0].fd;
	fds[1] = gm.r[0].fd;	/* 3 GiB file is fine for the 2 MiB region... */
	gm2.r[1].size = 4 * GiB;	/* ...but not for a 4 GiB one */
	gm2.total = 7 * GiB;
	assert_int_equal(guestmem_adopt(&gm2, fds, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "region needs"));
	assert_null(gm2.r[0].hva);
	assert_int_equal(gm2.r[0].fd, -1);
	assert_int_equal(count_mappings("memfd:kvmlu:halfway:"), 2);	/* only gm's */
	guestmem_destroy(&gm2);
	assert_true(fd_is_open(gm.r[0].fd));
	guestmem_destroy(&gm);
	assert_int_equal(count_mappings("memfd:kvmlu:halfway:"), 0);
}

static void test_memfd_adopt_refuses_inconsistent_plans(void **state)
{
	struct guestmem good, gm;
	int fds[2];

	(void)state;
	assert_int_equal(guestmem_create(&good, GUESTMEM_MEMFD, 3 * GiB + 2 * MiB, -1, "plans", err, sizeof(err)), 0);
	fds[0] = good.r[0].fd;
	fds[1] = good.r[1].fd;

	copy_plan(&good, &gm);
	gm.r[1].gpa = 2 * GiB;				/* overlaps region 0 */
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "overlap"));

	copy_plan(&good, &gm);
	gm.r[1].slot = gm.r[0].slot;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "memslot"));

	copy_plan(&good, &gm);
	gm.r[1].gpa += 4096;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "aligned"));

	copy_plan(&good, &gm);
	gm.r[1].gpa = UINT64_MAX - 2 * MiB + 2;
	gm.r[1].gpa &= ~(2 * MiB - 1);
	gm.r[1].size = 4 * MiB;
	gm.total = gm.r[0].size + gm.r[1].size;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);

	copy_plan(&good, &gm);
	gm.total += 2 * MiB;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "add up"));

	copy_plan(&good, &gm);
	gm.nr = GUESTMEM_MAX_REGIONS + 1;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);
	copy_plan(&good, &gm);
	gm.nr = 0;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);

	copy_plan(&good, &gm);
	gm.backend = (enum guestmem_backend)5;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);

	copy_plan(&good, &gm);
	gm.r[0].fd_offset = 100;
	assert_int_equal(guestmem_adopt(&gm, fds, err, sizeof(err)), -EINVAL);

	/* None of the refusals mapped anything or took the fds. */
	assert_int_equal(count_mappings("memfd:kvmlu:plans:"), 2);
	assert_true(fd_is_open(fds[0]) && fd_is_open(fds[1]));
	guestmem_destroy(&good);
}

static uint64_t file_blocks_bytes(const struct guestmem *gm)
{
	uint64_t bytes = 0;
	unsigned int i;
	struct stat st;

	for (i = 0; i < gm->nr; i++) {
		assert_int_equal(fstat(gm->r[i].fd, &st), 0);
		bytes += (uint64_t)st.st_blocks * 512;
	}
	return bytes;
}

static void test_memfd_resident_counts_written_pages_not_holes(void **state)
{
	struct guestmem gm;
	uint64_t before = 1, after = 1, blocks;
	char *p;

	(void)state;
	/* Two regions, 3 GiB + 4 MiB of RAM, nearly all hole. */
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 3 * GiB + 4 * MiB, -1, "resid",
					 err, sizeof(err)), 0);
	assert_int_equal(gm.nr, 2);
	assert_int_equal(guestmem_resident(&gm, &before), 0);
	assert_true(before == 0);

	p = gm.r[0].hva;
	p[0] = 1;
	p[4096 * 3 + 17] = 2;
	memset(p + 1 * GiB, 0x5a, 2 * MiB);
	p = gm.r[1].hva;
	p[4 * MiB - 1] = 3;
	blocks = file_blocks_bytes(&gm);
	assert_int_equal(guestmem_resident(&gm, &after), 0);
	print_message("resident %llu KiB, file blocks %llu KiB\n",
		      (unsigned long long)(after >> 10), (unsigned long long)(blocks >> 10));
	/* At least the pages written; at most what the files hold (huge pages). */
	assert_true(after >= 3 * 4096 + 2 * MiB);
	assert_true(after <= blocks);
	/* Asking allocates nothing. */
	assert_true(file_blocks_bytes(&gm) == blocks);
	guestmem_destroy(&gm);
}

static void test_memfd_resident_is_unknown_for_guest_memfd(void **state)
{
	struct guestmem gm;
	uint64_t bytes = 7;

	(void)state;
	memset(&gm, 0, sizeof(gm));
	assert_int_equal(guestmem_layout(4 * MiB, &gm), 0);
	gm.backend = GUESTMEM_GUEST_MEMFD;
	assert_int_equal(guestmem_resident(&gm, &bytes), -EOPNOTSUPP);
	assert_true(bytes == 7);
	assert_int_equal(guestmem_resident(NULL, &bytes), -EINVAL);
}

static void test_destroy_of_struct_without_regions_closes_nothing(void **state)
{
	struct guestmem gm;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	memset(&gm, 0, sizeof(gm));
	gm.r[0].fd = p[0];	/* nr is 0: this slot is not in use */
	guestmem_destroy(&gm);
	guestmem_destroy(NULL);
	assert_true(fd_is_open(p[0]));
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memfd_create_makes_shared_sealed_files_without_cloexec),
		cmocka_unit_test(test_memfd_create_of_4g_maps_both_sides_of_the_hole),
		cmocka_unit_test(test_memfd_create_rejects_bad_size_and_backend),
		cmocka_unit_test(test_memfd_adopt_maps_the_same_memory),
		cmocka_unit_test(test_memfd_adopt_refuses_a_file_smaller_than_its_region),
		cmocka_unit_test(test_memfd_adopt_refuses_files_that_are_not_memfds),
		cmocka_unit_test(test_memfd_adopt_failing_on_region_2_leaves_nothing_mapped),
		cmocka_unit_test(test_memfd_adopt_refuses_inconsistent_plans),
		cmocka_unit_test(test_destroy_of_struct_without_regions_closes_nothing),
		cmocka_unit_test(test_memfd_resident_counts_written_pages_not_holes),
		cmocka_unit_test(test_memfd_resident_is_unknown_for_guest_memfd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

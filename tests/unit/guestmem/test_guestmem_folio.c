// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of guestmem/folio.c: the host's shmem THP setting as the VMM
 * reads it, the decision to ask for 2 MiB folios, the 2 MiB-aligned RAM
 * mapping, the smaps count of huge-mapped bytes (on a fake smaps file),
 * and, on this machine's own kernel, what a VM's memfd RAM really gets:
 * 2 MiB folios when shmem_enabled allows them (skipped with the reason
 * otherwise; the test never changes the setting) and 4 KiB pages with a
 * log sentence naming the setting when it does not. Needs no KVM.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guestmem/folio.h"
#include "guestmem/guestmem.h"
#include "guestmem/guestmem_folio.h"

#define MiB (1ULL << 20)

static char err[512];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_shmem_thp_parse_takes_the_bracketed_word(void **state)
{
	enum guestmem_shmem_thp t;

	(void)state;
	assert_int_equal(guestmem_shmem_thp_parse("always within_size [advise] never deny force\n", &t), 0);
	assert_int_equal(t, GUESTMEM_SHMEM_THP_ADVISE);
	assert_int_equal(guestmem_shmem_thp_parse("always within_size advise [never] deny force\n", &t), 0);
	assert_int_equal(t, GUESTMEM_SHMEM_THP_NEVER);
	assert_int_equal(guestmem_shmem_thp_parse("[always] within_size advise never deny force", &t), 0);
	assert_int_equal(t, GUESTMEM_SHMEM_THP_ALWAYS);
	assert_int_equal(guestmem_shmem_thp_parse("always [within_size] advise never deny force", &t), 0);
	assert_int_equal(t, GUESTMEM_SHMEM_THP_WITHIN_SIZE);
	assert_int_equal(guestmem_shmem_thp_parse("always within_size advise never [deny] force", &t), 0);
	assert_int_equal(t, GUESTMEM_SHMEM_THP_DENY);
	assert_int_equal(guestmem_shmem_thp_parse("always within_size advise never deny [force]", &t), 0);
	assert_int_equal(t, GUESTMEM_SHMEM_THP_FORCE);
}

static void test_shmem_thp_parse_rejects_text_without_a_known_choice(void **state)
{
	enum guestmem_shmem_thp t = GUESTMEM_SHMEM_THP_ADVISE;

	(void)state;
	assert_int_equal(guestmem_shmem_thp_parse("always advise never", &t), -EINVAL);
	assert_int_equal(guestmem_shmem_thp_parse("[advis] never", &t), -EINVAL);
	assert_int_equal(guestmem_shmem_thp_parse("[advise never", &t), -EINVAL);
	assert_int_equal(guestmem_shmem_thp_parse("[advisee]", &t), -EINVAL);
	assert_int_equal(guestmem_shmem_thp_parse("", &t), -EINVAL);
	assert_int_equal(guestmem_shmem_thp_parse(NULL, &t), -EINVAL);
	assert_int_equal(t, GUESTMEM_SHMEM_THP_ADVISE);
}

static void test_shmem_thp_read_says_unknown_without_the_file(void **state)
{
	char path[] = "/tmp/kvmlu-thp-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "always within_size [advise] never deny force\n");
	assert_int_equal(guestmem_shmem_thp_read(path), GUESTMEM_SHMEM_THP_ADVISE);
	write_file(path, "garbage\n");
	assert_int_equal(guestmem_shmem_thp_read(path), GUESTMEM_SHMEM_THP_UNKNOWN);
	unlink(path);
	assert_int_equal(guestmem_shmem_thp_read(path), GUESTMEM_SHMEM_THP_UNKNOWN);
}

static void test_huge_folios_asked_only_where_the_setting_gives_them(void **state)
{
	(void)state;
	assert_true(guestmem_shmem_thp_allows_huge(GUESTMEM_SHMEM_THP_ADVISE));
	assert_true(guestmem_shmem_thp_allows_huge(GUESTMEM_SHMEM_THP_WITHIN_SIZE));
	assert_true(guestmem_shmem_thp_allows_huge(GUESTMEM_SHMEM_THP_ALWAYS));
	assert_true(guestmem_shmem_thp_allows_huge(GUESTMEM_SHMEM_THP_FORCE));
	assert_false(guestmem_shmem_thp_allows_huge(GUESTMEM_SHMEM_THP_NEVER));
	assert_false(guestmem_shmem_thp_allows_huge(GUESTMEM_SHMEM_THP_DENY));
	assert_false(guestmem_shmem_thp_allows_huge(GUESTMEM_SHMEM_THP_UNKNOWN));
	assert_string_equal(guestmem_shmem_thp_name(GUESTMEM_SHMEM_THP_WITHIN_SIZE), "within_size");
	assert_string_equal(guestmem_shmem_thp_name((enum guestmem_shmem_thp)99), "unknown");
}

static void test_folio_map_is_2mib_aligned_and_maps_the_file(void **state)
{
	int fd = memfd_create("kvmlu-folio-map", MFD_CLOEXEC);
	uint64_t offsets[] = { 0, 4096, 2 * MiB };
	unsigned int i;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8 * MiB), 0);
	assert_int_equal(pwrite(fd, "kvmlu", 5, 2 * MiB), 5);
	for (i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		bool advised = true;
		void *p = NULL;

		assert_int_equal(guestmem_folio_map(fd, 4 * MiB, offsets[i], false, &p, &advised,
						    err, sizeof(err)), 0);
		assert_false(advised);
		/* Address and file offset agree modulo 2 MiB: what a PMD needs. */
		assert_int_equal(((uintptr_t)p + offsets[i]) % (2 * MiB), 0);
		assert_memory_equal((char *)p + (2 * MiB - offsets[i]), "kvmlu", 5);
		assert_int_equal(munmap(p, 4 * MiB), 0);
	}
	close(fd);
}

static void test_huge_mapped_sums_pmd_lines_of_mappings_inside_the_range(void **state)
{
	char path[] = "/tmp/kvmlu-smaps-XXXXXX";
	int fd = mkstemp(path);
	uint64_t b = 1;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path,
		   "7f0000000000-7f0000400000 rw-s 00000000 00:01 7 /memfd:ram0 (deleted)\n"
		   "Size:               4096 kB\n"
		   "FilePmdMapped:         0 kB\n"
		   "ShmemPmdMapped:     2048 kB\n"
		   "7f0000400000-7f0000800000 rw-s 00400000 00:01 7 /memfd:ram0 (deleted)\n"
		   "AnonHugePages:      4096 kB\n"
		   "ShmemPmdMapped:     4096 kB\n"
		   "VmFlags: rd wr sh mr mw me ms sd hg\n"
		   "7f0000800000-7f0000c00000 rw-s 00000000 00:01 8 /memfd:other (deleted)\n"
		   "ShmemPmdMapped:     4096 kB\n");
	assert_int_equal(guestmem_folio_huge_mapped((void *)0x7f0000000000UL, 8 * MiB, path, &b), 0);
	assert_int_equal(b, 6 * MiB);
	assert_int_equal(guestmem_folio_huge_mapped((void *)0x7f0000400000UL, 4 * MiB, path, &b), 0);
	assert_int_equal(b, 4 * MiB);
	assert_int_equal(guestmem_folio_huge_mapped((void *)0x7f1000000000UL, 4 * MiB, path, &b), 0);
	assert_int_equal(b, 0);
	unlink(path);
	assert_int_equal(guestmem_folio_huge_mapped((void *)0x7f0000000000UL, 8 * MiB, path, &b), -ENOENT);
}

static void touch(const struct guestmem *gm)
{
	for (unsigned int i = 0; i < gm->nr; i++)
		for (uint64_t off = 0; off < gm->r[i].size; off += 4096)
			((volatile char *)gm->r[i].hva)[off] = 1;
}

/*
 * This machine's kernel decides: with shmem_enabled advise/always/
 * within_size a VM's memfd RAM must end up in 2 MiB folios, whole.
 */
static void test_vm_ram_gets_2mib_folios_where_the_host_allows(void **state)
{
	enum guestmem_shmem_thp t = guestmem_shmem_thp_read(NULL);
	struct guestmem gm;
	uint64_t huge = 0;

	(void)state;
	if (!guestmem_shmem_thp_allows_huge(t)) {
		print_message("SKIP: %s is %s here (this test does not change it)\n",
			      GUESTMEM_SHMEM_THP_PATH, guestmem_shmem_thp_name(t));
		skip();
	}
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 16 * MiB, -1, "folio-huge",
					 err, sizeof(err)), 0);
	assert_true(gm.huge_advised);
	assert_string_equal(guestmem_folio_name(&gm), "2M");
	touch(&gm);
	assert_int_equal(guestmem_folio_huge_bytes(&gm, &huge), 0);
	assert_int_equal(huge, 16 * MiB);
	guestmem_destroy(&gm);
}

/* Where the setting gives no huge folios: 4 KiB pages, and the log says why. */
static void test_vm_ram_falls_back_to_4k_and_names_the_setting(void **state)
{
	enum guestmem_shmem_thp t = guestmem_shmem_thp_read(NULL);
	struct guestmem gm;
	char why[256], want[64];
	uint64_t huge = 1;

	(void)state;
	if (guestmem_shmem_thp_allows_huge(t)) {
		print_message("SKIP: %s is %s here: no fallback to see\n",
			      GUESTMEM_SHMEM_THP_PATH, guestmem_shmem_thp_name(t));
		skip();
	}
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 16 * MiB, -1, "folio-small",
					 err, sizeof(err)), 0);
	assert_false(gm.huge_advised);
	assert_string_equal(guestmem_folio_name(&gm), "4K");
	touch(&gm);
	assert_int_equal(guestmem_folio_huge_bytes(&gm, &huge), 0);
	assert_int_equal(huge, 0);
	guestmem_folio_describe(&gm, why, sizeof(why));
	snprintf(want, sizeof(want), "shmem_enabled is %s", guestmem_shmem_thp_name(t));
	assert_non_null(strstr(why, "4 KiB pages"));
	assert_non_null(strstr(why, want));
	guestmem_destroy(&gm);
}

/*
 * guestmem_folio_collapse() on RAM that asked for no 2 MiB folios: nothing
 * happens (no copy into new huge folios), the bytes stay as written.
 */
static void test_collapse_leaves_4k_ram_alone(void **state)
{
	struct guestmem gm;
	uint64_t huge = 1;

	(void)state;
	assert_int_equal(guestmem_folio_collapse(NULL), -EINVAL);
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 8 * MiB, -1, "folio-collapse-4k",
					 err, sizeof(err)), 0);
	gm.huge_advised = false;
	for (uint64_t off = 0; off < 8 * MiB; off += 4096)
		((volatile uint64_t *)gm.r[0].hva)[off / 8] = off ^ 0x5a5a;
	assert_int_equal(guestmem_folio_collapse(&gm), 0);
	for (uint64_t off = 0; off < 8 * MiB; off += 4096)
		assert_int_equal(((volatile uint64_t *)gm.r[0].hva)[off / 8], off ^ 0x5a5a);
	if (guestmem_folio_huge_bytes(&gm, &huge) == 0 &&
	    !guestmem_shmem_thp_allows_huge(guestmem_shmem_thp_read(NULL)))
		assert_int_equal(huge, 0);
	guestmem_destroy(&gm);
}

/*
 * 2 MiB folios mapped with 4 KiB PTEs (as UFFDIO_CONTINUE leaves them after
 * lazy verification; here through a VMA split for a while) are mapped
 * with 2 MiB entries again, the contents unchanged. Where shmem_enabled
 * gives no huge folios (this machine), SKIP; harness/vm_lazy_verify_huge_folios
 * runs it in the QEMU host with advise.
 */
static void test_collapse_maps_huge_folios_with_pmds_again(void **state)
{
	enum guestmem_shmem_thp t = guestmem_shmem_thp_read(NULL);
	struct guestmem gm;
	uint64_t huge = 0;
	char *p;
	int ret;

	(void)state;
	if (!guestmem_shmem_thp_allows_huge(t)) {
		print_message("SKIP: %s is %s here (this test does not change it)\n",
			      GUESTMEM_SHMEM_THP_PATH, guestmem_shmem_thp_name(t));
		skip();
	}
	assert_int_equal(guestmem_create(&gm, GUESTMEM_MEMFD, 8 * MiB, -1, "folio-collapse",
					 err, sizeof(err)), 0);
	assert_true(gm.huge_advised);
	p = gm.r[0].hva;
	for (uint64_t off = 0; off < 8 * MiB; off += 4096)
		((volatile uint64_t *)p)[off / 8] = off ^ 0xa5a5;
	assert_int_equal(guestmem_folio_huge_bytes(&gm, &huge), 0);
	assert_int_equal(huge, 8 * MiB);
	/*
	 * One page of each 2 MiB read-only: the VMA splits there and the PMD
	 * goes (a file THP's PMD is zapped, not split). Read back while it is
	 * split, each page is mapped with a PTE (no VMA covers the aligned 2
	 * MiB); after the mprotect back the VMAs merge, the PTEs stay.
	 */
	for (uint64_t off = 0; off < 8 * MiB; off += 2 * MiB) {
		assert_int_equal(mprotect(p + off, 4096, PROT_READ), 0);
		for (uint64_t o = off; o < off + 2 * MiB; o += 4096)
			assert_int_equal(((volatile uint64_t *)p)[o / 8], o ^ 0xa5a5);
		assert_int_equal(mprotect(p + off, 4096, PROT_READ | PROT_WRITE), 0);
	}
	assert_int_equal(guestmem_folio_huge_bytes(&gm, &huge), 0);
	assert_int_equal(huge, 0);
	ret = guestmem_folio_collapse(&gm);
	if (ret == -EINVAL) {
		print_message("SKIP: this kernel has no MADV_COLLAPSE\n");
		guestmem_destroy(&gm);
		skip();
	}
	assert_int_equal(ret, 0);
	assert_int_equal(guestmem_folio_huge_bytes(&gm, &huge), 0);
	assert_int_equal(huge, 8 * MiB);
	for (uint64_t off = 0; off < 8 * MiB; off += 4096)
		assert_int_equal(((volatile uint64_t *)p)[off / 8], off ^ 0xa5a5);
	guestmem_destroy(&gm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shmem_thp_parse_takes_the_bracketed_word),
		cmocka_unit_test(test_shmem_thp_parse_rejects_text_without_a_known_choice),
		cmocka_unit_test(test_shmem_thp_read_says_unknown_without_the_file),
		cmocka_unit_test(test_huge_folios_asked_only_where_the_setting_gives_them),
		cmocka_unit_test(test_folio_map_is_2mib_aligned_and_maps_the_file),
		cmocka_unit_test(test_huge_mapped_sums_pmd_lines_of_mappings_inside_the_range),
		cmocka_unit_test(test_vm_ram_gets_2mib_folios_where_the_host_allows),
		cmocka_unit_test(test_vm_ram_falls_back_to_4k_and_names_the_setting),
		cmocka_unit_test(test_collapse_leaves_4k_ram_alone),
		cmocka_unit_test(test_collapse_maps_huge_folios_with_pmds_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

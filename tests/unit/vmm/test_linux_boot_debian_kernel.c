// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the Linux boot path against the real client: Debian's
 * stock cloud kernel (fetched by tests/guest/linux/fetch-kernel.sh into
 * build/guest-linux/vmlinuz, or $KVMLU_GUEST_KERNEL). Its header must
 * parse, it must be placed at its preferred address in a 256 MiB guest
 * with the test initramfs below it, its zero page must carry its own
 * header bytes, and truncated or retouched copies of it must be refused.
 * Each test SKIPs when the kernel has not been fetched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/vmm/test_linux_boot_support.h"
#include "vmm/boot/boot_file.h"
#include "vmm/boot/linux_boot.h"
#include "vmm/boot/linux_layout.h"
#include "vmm/boot/linux_load.h"

#define MIB (1ULL << 20)

struct real_kernel {
	void *buf;
	size_t len;
	void *initrd;
	size_t initrd_len;
	char why[400];		/* why there is no kernel, said by each test it skips */
};

/* $KVMLU_GUEST_KERNEL, the copy in build/, else fetch-kernel.sh's cache. */
static const char *kernel_path(void)
{
	static char cached[512];
	const char *p = getenv("KVMLU_GUEST_KERNEL");
	glob_t g;

	if (p && *p)
		return p;
	if (access("build/guest-linux/vmlinuz", R_OK) == 0)
		return "build/guest-linux/vmlinuz";
	if (glob("/var/cache/kvmlu/guest-kernel/x/boot/vmlinuz-*", 0, NULL, &g) == 0) {
		snprintf(cached, sizeof(cached), "%s", g.gl_pathv[g.gl_pathc - 1]);
		globfree(&g);
		return cached;
	}
	return "build/guest-linux/vmlinuz";
}

static int setup(void **state)
{
	struct real_kernel *k = calloc(1, sizeof(*k));
	char err[256];

	if (!k)
		return -1;
	if (boot_file_read("kernel", kernel_path(), LINUX_BZIMAGE_MAX_SIZE, &k->buf,
				 &k->len, err, sizeof(err)))
		snprintf(k->why, sizeof(k->why),
			 "SKIP: no Debian kernel: %s (tests/guest/linux/fetch-kernel.sh)", err);
	/* Optional: the initramfs the boot tests use. */
	boot_file_read("initrd", "build/guest-linux/initramfs.cpio.gz",
			     LINUX_INITRD_MAX_SIZE, &k->initrd, &k->initrd_len, NULL, 0);
	*state = k;
	return 0;
}

static int teardown(void **state)
{
	struct real_kernel *k = *state;

	free(k->buf);
	free(k->initrd);
	free(k);
	return 0;
}

static struct real_kernel *need_kernel(void **state)
{
	struct real_kernel *k = *state;

	if (!k->buf) {
		printf("%s\n", k->why);	/* the reason, on the test's own lines */
		skip();
	}
	return k;
}

static void test_debian_kernel_header_parses(void **state)
{
	struct real_kernel *k = need_kernel(state);
	struct linux_bzimage b;
	char err[256] = "";

	assert_int_equal(linux_bzimage_parse(k->buf, k->len, &b, err, sizeof(err)), 0);
	printf("protocol %u.%02u, setup %zu bytes, kernel %zu bytes, init_size %#x, pref %#llx, align %#x, cmdline %u\n",
	       b.version >> 8, b.version & 0xff, b.setup_size, b.kernel_size, b.init_size,
	       (unsigned long long)b.pref_address, b.alignment, b.cmdline_max);
	assert_true(b.version >= LINUX_MIN_PROTOCOL);
	assert_true(b.hdr.xloadflags & XLF_KERNEL_64);
	assert_true(b.relocatable);
	assert_int_equal(b.setup_size + b.kernel_size, k->len);
	assert_true(b.init_size > b.kernel_size);
	assert_true(b.cmdline_max >= 255);
}

static void test_debian_kernel_placed_at_pref_address_in_256m(void **state)
{
	struct real_kernel *k = need_kernel(state);
	struct linux_load_input in = { 0 };
	struct linux_load_plan plan;
	struct linux_bzimage b;
	struct boot_params *bp;
	struct guestmem gm;
	char err[256] = "";

	assert_int_equal(linux_bzimage_parse(k->buf, k->len, &b, err, sizeof(err)), 0);
	assert_int_equal(tlb_mem_create(&gm, 256 * MIB), 0);
	in.image = &b;
	in.initrd = k->initrd;
	in.initrd_size = k->initrd_len;
	in.cmdline = LINUX_BOOT_DEFAULT_CMDLINE;
	in.nr_cpus = 1;
	assert_int_equal(linux_load_plan(&gm, &in, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.kernel_gpa, b.pref_address);
	assert_int_equal(plan.entry, b.pref_address + 0x200);
	if (k->initrd)
		assert_true(plan.initrd_gpa >= plan.kernel_end &&
			    plan.initrd_gpa + plan.initrd_size <= 256 * MIB);
	assert_int_equal(linux_load_write(&gm, &in, &plan, err, sizeof(err)), 0);

	bp = guestmem_gpa_to_hva(&gm, LINUX_BOOT_PARAMS_GPA, sizeof(*bp));
	/* The header bytes the kernel reads back are its own, but for ours. */
	assert_memory_equal(&bp->hdr, (uint8_t *)k->buf + LINUX_SETUP_HDR_OFFSET,
			    offsetof(struct setup_header, type_of_loader));
	assert_int_equal(bp->hdr.init_size, b.init_size);
	assert_int_equal(bp->hdr.kernel_alignment, b.alignment);
	assert_memory_equal(guestmem_gpa_to_hva(&gm, plan.kernel_gpa, b.kernel_size), b.kernel,
			    b.kernel_size);
	tlb_mem_destroy(&gm);

	/* Too small a guest for its 50-odd MiB of init_size: refused. */
	assert_int_equal(tlb_mem_create(&gm, 32 * MIB), 0);
	assert_int_equal(linux_load_plan(&gm, &in, &plan, err, sizeof(err)), -ENOMEM);
	tlb_mem_destroy(&gm);
}

static void test_debian_kernel_truncated_or_retouched_is_refused(void **state)
{
	struct real_kernel *k = need_kernel(state);
	struct linux_bzimage b;
	uint8_t *copy;
	char err[256] = "";

	assert_int_equal(linux_bzimage_parse(k->buf, k->len - 4096, &b, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "truncated"));
	assert_int_equal(linux_bzimage_parse(k->buf, k->len / 2, &b, err, sizeof(err)), -ENOEXEC);
	assert_int_equal(linux_bzimage_parse(k->buf, 0x400, &b, err, sizeof(err)), -ENOEXEC);

	copy = malloc(k->len);
	assert_non_null(copy);
	memcpy(copy, k->buf, k->len);
	copy[LINUX_HDRS_OFFSET] = 'X';
	assert_int_equal(linux_bzimage_parse(copy, k->len, &b, err, sizeof(err)), -ENOEXEC);
	memcpy(copy, k->buf, k->len);
	copy[TLB_OFF(version)] = 0x0b;	/* 2.11 */
	assert_int_equal(linux_bzimage_parse(copy, k->len, &b, err, sizeof(err)), -ENOTSUP);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_kernel_header_parses),
		cmocka_unit_test(test_debian_kernel_placed_at_pref_address_in_256m),
		cmocka_unit_test(test_debian_kernel_truncated_or_retouched_is_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

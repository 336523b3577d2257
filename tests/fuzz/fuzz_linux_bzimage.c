// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the Linux boot path on an untrusted --kernel file:
 * linux_bzimage_parse(), then, for what it accepts, linux_load_plan() and
 * linux_load_write() into a 64 MiB guest (lazily mapped, kept across runs).
 * Any crash, sanitizer report or leak is a bug; refusals are expected.
 * Seed in tests/fuzz/corpus/fuzz_linux_bzimage/: a minimal valid header.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "guestmem/guestmem.h"
#include "vmm/boot/linux_bzimage.h"
#include "vmm/boot/linux_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct guestmem fuzz_gm;

static int fuzz_mem(void)
{
	void *p;

	if (fuzz_gm.nr)
		return 0;
	if (guestmem_layout(64ULL << 20, &fuzz_gm))
		return -1;
	p = mmap(NULL, fuzz_gm.r[0].size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		fuzz_gm.nr = 0;
		return -1;
	}
	fuzz_gm.r[0].hva = p;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct linux_load_input in = { 0 };
	struct linux_load_plan plan;
	struct linux_bzimage b;
	char err[256];

	if (linux_bzimage_parse(data, size, &b, err, sizeof(err)))
		return 0;
	if (fuzz_mem())
		return 0;
	in.image = &b;
	/* The image's tail doubles as an initrd, to vary its placement. */
	in.initrd = data + size / 2;
	in.initrd_size = size - size / 2;
	in.cmdline = "console=ttyS0";
	in.nr_cpus = 1 + data[size - 1] % 8;
	if (linux_load_plan(&fuzz_gm, &in, &plan, err, sizeof(err)) == 0)
		linux_load_write(&fuzz_gm, &in, &plan, err, sizeof(err));
	return 0;
}

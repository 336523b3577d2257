// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-bench-folio: what the folio size of a memfd costs at a host kexec
 * (docs/live-update-memory.md, lever 4). Two memfds of one size, with the same
 * kind of data, one in 4 KiB pages (MADV_NOHUGEPAGE), one in 2 MiB shmem
 * THP folios (MADV_HUGEPAGE, with shmem_enabled allowing it), mapped the
 * way kvmlu-vmm maps guest RAM (guestmem_folio_map). Run inside the QEMU
 * host by harness/memfd_folio_preserve, in two stages around a kexec:
 *
 *   preserve --mib N   fill both (timed: fault-in and write), check the
 *                      folio sizes obtained by value (ShmemHugePages in
 *                      /proc/meminfo, ShmemPmdMapped of each mapping), then
 *                      PRESERVE_FD of each (timed) twice: first with the
 *                      migration out of KHO scratch (CMA) the long-term
 *                      pin makes, then, after closing that session, again
 *                      with nothing to migrate; a child keeps the second
 *                      session's fd open for the kexec.
 *   retrieve --mib N   RETRIEVE_FD of each (timed), ShmemHugePages after
 *                      each (a huge folio must come back huge), map, check
 *                      every byte (timed) and the PMD mappings, FINISH.
 *
 * Lines "BENCH <op> <small|huge> <MiB> MiB <ms> ms (<ms/GiB> ms/GiB)" are
 * what tests/bench/bench_folio_preserve.sh reads. Exit 0 with "TEST
 * PASSED", 1 with "TEST FAILED: why", 4 with "TEST SKIPPED: why".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/luo_session.h"
#include "guestmem/folio.h"

#define BENCH_SESSION	"kvmlu/vm/bench-folio"
#define NR_KINDS	2

struct kind {
	const char *name;	/* "small", "huge" */
	bool huge;
	uint64_t token;
	uint64_t seed;
	int fd;
	void *hva;
};

static struct kind kinds[NR_KINDS] = {
	{ .name = "small", .huge = false, .token = 1, .seed = 0x736d616c6c000000ULL, .fd = -1 },
	{ .name = "huge", .huge = true, .token = 2, .seed = 0x6875676500000000ULL, .fd = -1 },
};

static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("TEST FAILED: ");
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

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void bench_line(const char *op, const struct kind *k, uint64_t size, double ms)
{
	printf("BENCH %s %s %llu MiB %.1f ms (%.1f ms/GiB)\n", op, k->name,
	       (unsigned long long)(size >> 20), ms, ms * (double)(1ULL << 30) / (double)size);
	fflush(stdout);
}

/* A "Key: N kB" line of /proc/meminfo, in bytes (0 if absent). */
static uint64_t meminfo_bytes(const char *key)
{
	unsigned long long kb = 0;
	size_t n = strlen(key);
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		fail("open /proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':' &&
		    sscanf(line + n + 1, "%llu", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

static uint64_t shmem_huge_bytes(void)
{
	return meminfo_bytes("ShmemHugePages");
}

/*
 * Free CMA. KHO's scratch areas are CMA (MIGRATE_CMA, for movable
 * allocations only): a memfd folio that lands there must be migrated out
 * before PRESERVE_FD may pin it long-term, a copy that can outweigh
 * everything else the preservation does. (CmaTotal does not count the
 * scratch areas, so what they hold is read as CmaFree going down.)
 */
static uint64_t cma_free_bytes(void)
{
	return meminfo_bytes("CmaFree");
}

static uint64_t pmd_mapped(const struct kind *k, uint64_t size)
{
	uint64_t b;
	int ret = guestmem_folio_huge_mapped(k->hva, size, NULL, &b);

	if (ret)
		fail("%s: reading /proc/self/smaps: %s", k->name, strerror(-ret));
	return b;
}

static void map(struct kind *k, uint64_t size)
{
	char err[256];
	bool advised;
	int ret;

	ret = guestmem_folio_map(k->fd, size, 0, k->huge, &k->hva, &advised, err, sizeof(err));
	if (ret)
		fail("%s: %s", k->name, err);
	if (k->huge && !advised)
		fail("%s: madvise(MADV_HUGEPAGE) refused", k->name);
	if (!k->huge && madvise(k->hva, (size_t)size, MADV_NOHUGEPAGE))
		fail("%s: madvise(MADV_NOHUGEPAGE): %s", k->name, strerror(errno));
}

/* Each 8-byte word holds its offset mixed with the kind's seed: no page is zero. */
static uint64_t word_at(const struct kind *k, uint64_t off)
{
	return k->seed ^ (off * 0x9e3779b97f4a7c15ULL) ^ (off >> 12);
}

static void fill(struct kind *k, uint64_t size)
{
	uint64_t *w = k->hva;

	for (uint64_t i = 0; i < size / 8; i++)
		w[i] = word_at(k, i * 8);
}

static void verify(const struct kind *k, uint64_t size)
{
	const uint64_t *w = k->hva;

	for (uint64_t i = 0; i < size / 8; i++)
		if (w[i] != word_at(k, i * 8))
			fail("%s: word at offset 0x%llx is 0x%llx, expected 0x%llx", k->name,
			     (unsigned long long)(i * 8), (unsigned long long)w[i],
			     (unsigned long long)word_at(k, i * 8));
}

/* A folio size claim, checked by value. */
static void expect(const char *what, const struct kind *k, uint64_t got, uint64_t want)
{
	printf("FOLIO %s %s: %llu KiB (expected %llu KiB)\n", k->name, what,
	       (unsigned long long)(got >> 10), (unsigned long long)(want >> 10));
	fflush(stdout);
	if (got != want)
		fail("%s: %s is %llu KiB, expected %llu KiB", k->name, what,
		     (unsigned long long)(got >> 10), (unsigned long long)(want >> 10));
}

static void stage_preserve(uint64_t size)
{
	enum guestmem_shmem_thp t = guestmem_shmem_thp_read(NULL);
	struct luo_session s;
	char err[256];
	int i, pass, ret;
	uint64_t cma, cma_start;
	pid_t pid;

	cma_start = cma_free_bytes();
	printf("shmem_enabled: %s\n", guestmem_shmem_thp_name(t));
	if (!guestmem_shmem_thp_allows_huge(t))
		skip("shmem_enabled is not advise/always/within_size: no 2 MiB memfd folios to compare");
	for (i = 0; i < NR_KINDS; i++) {
		struct kind *k = &kinds[i];
		uint64_t before;
		double t0;

		k->fd = memfd_create(k->name, MFD_ALLOW_SEALING);
		if (k->fd < 0)
			fail("memfd_create: %s", strerror(errno));
		if (ftruncate(k->fd, (off_t)size) || fcntl(k->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
			fail("%s: ftruncate/seal: %s", k->name, strerror(errno));
		map(k, size);
		before = shmem_huge_bytes();
		cma = cma_free_bytes();
		t0 = now_ms();
		fill(k, size);
		bench_line("fill", k, size, now_ms() - t0);
		cma -= cma_free_bytes();
		printf("FOLIO %s in KHO scratch (CMA) after the fill: %lld KiB of %llu KiB\n", k->name,
		       (long long)cma >> 10, (unsigned long long)(size >> 10));
		expect("ShmemHugePages growth", k, shmem_huge_bytes() - before, k->huge ? size : 0);
		expect("ShmemPmdMapped", k, pmd_mapped(k, size), k->huge ? size : 0);
	}

	/*
	 * Twice: the first PRESERVE_FD also migrates every folio that sits in
	 * KHO scratch (CMA) elsewhere (memfd_pin_folios() with FOLL_LONGTERM);
	 * closing the session unpreserves and unpins, and the folios stay
	 * where they went. The second PRESERVE_FD is the pin and the KHO
	 * bookkeeping alone; that session is the one kept for the kexec.
	 */
	for (pass = 0; pass < 2; pass++) {
		luo_session_init(&s);
		ret = luo_session_create(&s, pass ? BENCH_SESSION : BENCH_SESSION "-1",
					 err, sizeof(err));
		if (ret == -ENOENT || ret == -ENODEV)
			skip(err);
		if (ret)
			fail("%s", err);
		for (i = 0; i < NR_KINDS; i++) {
			struct kind *k = &kinds[i];
			double t0 = now_ms();

			ret = luo_session_preserve_fd(&s, k->fd, k->token, k->name, err, sizeof(err));
			if (ret)
				fail("%s", err);
			bench_line(pass ? "preserve" : "preserve-first", k, size, now_ms() - t0);
		}
		printf("FOLIO both in KHO scratch (CMA) after PRESERVE_FD %d: %lld KiB\n", pass + 1,
		       (long long)(cma_start - cma_free_bytes()) >> 10);
		if (!pass)
			luo_session_close(&s);
	}
	/* The session survives the kexec only while its fd is open. */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		for (;;)
			pause();
	}
	printf("session %s held by pid %d for the kexec\n", BENCH_SESSION, (int)pid);
	printf("TEST PASSED\n");
}

static void stage_retrieve(uint64_t size)
{
	struct luo_session s;
	uint64_t base, last;
	char err[256];
	int i, ret;

	luo_session_init(&s);
	base = shmem_huge_bytes();
	printf("FOLIO ShmemHugePages before retrieve: %llu KiB\n", (unsigned long long)(base >> 10));
	ret = luo_session_retrieve(&s, BENCH_SESSION, err, sizeof(err));
	if (ret)
		fail("%s", err);
	last = base;
	for (i = 0; i < NR_KINDS; i++) {
		struct kind *k = &kinds[i];
		double t0 = now_ms();
		uint64_t now;

		ret = luo_session_retrieve_fd(&s, k->token, k->name, &k->fd, err, sizeof(err));
		if (ret)
			fail("%s", err);
		bench_line("retrieve", k, size, now_ms() - t0);
		now = shmem_huge_bytes();
		expect("ShmemHugePages growth at RETRIEVE_FD", k, now - last, k->huge ? size : 0);
		last = now;
	}
	for (i = 0; i < NR_KINDS; i++) {
		struct kind *k = &kinds[i];
		double t0;

		/* Both ask for huge mappings: only folios that are huge can be. */
		k->huge = true;
		map(k, size);
		t0 = now_ms();
		verify(k, size);
		bench_line("verify", k, size, now_ms() - t0);
		expect("ShmemPmdMapped after retrieve", k, pmd_mapped(k, size),
		       k->token == 2 ? size : 0);
	}
	ret = luo_session_finish(&s, err, sizeof(err));
	if (ret)
		fail("%s", err);
	printf("TEST PASSED\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mib", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t mib = 256;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "m:", opts, NULL)) != -1) {
		if (c != 'm') {
			fprintf(stderr, "usage: kvmlu-bench-folio preserve|retrieve [--mib N]\n");
			return 2;
		}
		mib = strtoull(optarg, NULL, 0);
	}
	if (optind != argc - 1 || mib == 0 || mib % 2) {
		fprintf(stderr, "usage: kvmlu-bench-folio preserve|retrieve [--mib N (even)]\n");
		return 2;
	}
	if (!strcmp(argv[optind], "preserve"))
		stage_preserve(mib << 20);
	else if (!strcmp(argv[optind], "retrieve"))
		stage_retrieve(mib << 20);
	else
		fail("unknown stage %s", argv[optind]);
	return 0;
}

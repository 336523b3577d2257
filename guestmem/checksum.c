// SPDX-License-Identifier: GPL-2.0
/*
 * Checksum of guest RAM (XXH3-128), to prove memory came through an
 * upgrade or a kexec unchanged, and its text form.
 *
 * The sum is a digest table (digest_table.c) filled in one pass: every
 * 2 MiB chunk hashed, the digests combined in region and chunk order. A
 * table kept up to date with KVM's dirty log while the guest runs gives
 * the same value with only the chunks written since hashed at pause.
 *
 * Lifecycle: computed while the vCPUs are paused - before a kexec it goes
 * into the state FDT; after restore the new process computes it again and
 * compares before resuming.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/clock.h"
#include "guestmem/digest_table.h"
#include "guestmem/guestmem.h"

int guestmem_checksum(const struct guestmem *gm, unsigned int threads,
		      struct guestmem_checksum *out)
{
	struct guestmem_digest_table t;
	uint64_t t0;
	int ret;

	if (!gm || !out)
		return -EINVAL;
	t0 = kvmlu_mono_ns();
	ret = guestmem_digest_table_init(&t, gm);
	if (ret)
		return ret;
	ret = guestmem_digest_table_refresh(&t, threads, NULL, &out->threads);
	if (!ret)
		ret = guestmem_digest_table_sum(&t, &out->hi, &out->lo);
	if (!ret) {
		out->bytes = 0;
		for (unsigned int ri = 0; ri < gm->nr; ri++)
			out->bytes += gm->r[ri].size;
		out->nsec = kvmlu_mono_ns() - t0;
	}
	guestmem_digest_table_free(&t);
	return ret;
}

void guestmem_checksum_format(const struct guestmem_checksum *c, char buf[33])
{
	snprintf(buf, 33, "%016" PRIx64 "%016" PRIx64, c->hi, c->lo);
}

static int guestmem_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int guestmem_checksum_parse(const char *s, uint64_t *hi, uint64_t *lo)
{
	uint64_t v[2] = { 0, 0 };
	unsigned int i;

	if (!s || !hi || !lo)
		return -EINVAL;
	/* Exactly the form guestmem_checksum_format() writes, nothing else. */
	for (i = 0; i < 32; i++) {
		int d = guestmem_hex_digit(s[i]);

		if (d < 0)
			return -EINVAL;
		v[i / 16] = v[i / 16] << 4 | (uint64_t)d;
	}
	if (s[32] != '\0')
		return -EINVAL;
	*hi = v[0];
	*lo = v[1];
	return 0;
}

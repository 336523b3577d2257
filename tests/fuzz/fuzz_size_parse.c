// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the libguestmem text parsers that take outside
 * input: guestmem_parse_size (--memory), guestmem_backend_parse
 * (--memory-backend) and guestmem_checksum_parse (state FDT, JSON). Each
 * must either refuse or return a value that obeys its contract, and text
 * that parses must survive a round trip where one exists.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guestmem/guestmem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct guestmem_checksum c;
	enum guestmem_backend b;
	uint64_t v, hi, lo;
	char *s, buf[33];

	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	if (guestmem_parse_size(s, &v) == 0 && (v == 0 || v % GUESTMEM_SIZE_ALIGN))
		abort();
	if (guestmem_backend_parse(s, &b) == 0 &&
	    strcmp(guestmem_backend_name(b), s))
		abort();
	if (guestmem_checksum_parse(s, &hi, &lo) == 0) {
		memset(&c, 0, sizeof(c));
		c.hi = hi;
		c.lo = lo;
		guestmem_checksum_format(&c, buf);
		if (strcmp(buf, s))
			abort();
	}
	free(s);
	return 0;
}

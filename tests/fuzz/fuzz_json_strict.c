// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for common/json_strict.c, the token scan every reader
 * of outside JSON goes through (the wire, the agent config, the journal,
 * the kexec marker, the libvirt state file). Any byte string, parsed
 * with and without the UTF-8 check (the first byte picks). Invariants:
 * - refused: a reason is given, and no tree leaks out;
 * - a duplicate key is only ever reported for text json-c itself takes;
 * - accepted: json-c's own lenient parse of the same text gives the same
 *   tree (the scan only refuses, it never changes a value), and that
 *   tree written by json-c is accepted again and reads back equal.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_strict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* json-c with no extra checks, the whole text one value: NULL if not. */
static json_object *lenient(const char *text, size_t len, int *ok)
{
	struct json_tokener *tok = json_tokener_new_ex(16);
	json_object *o;

	if (!tok)
		abort();
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o && json_tokener_get_error(tok) == json_tokener_continue)
		o = json_tokener_parse_ex(tok, "", 1);
	*ok = json_tokener_get_error(tok) == json_tokener_success;
	json_tokener_free(tok);
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_strict_error e;
	json_object *o = NULL, *ref, *again = NULL;
	unsigned int flags;
	const char *text;
	size_t len;
	int rc, ok;

	if (size < 1)
		return 0;
	flags = data[0] & 1 ? JSON_STRICT_UTF8 : 0;
	text = (const char *)data + 1;
	size--;
	rc = json_strict_parse(text, size, 16, flags, &o, &e);
	if (rc) {
		if (o || !e.desc[0] || (e.fault != JSON_STRICT_SYNTAX && e.fault != JSON_STRICT_DUPLICATE))
			abort();
		if (e.fault == JSON_STRICT_DUPLICATE && !memchr(text, '\0', size)) {
			ref = lenient(text, size, &ok);
			if (!ok)
				abort();
			json_object_put(ref);
		}
		return 0;
	}
	ref = lenient(text, size, &ok);
	if (!ok || !json_object_equal(o, ref))
		abort();
	json_object_put(ref);
	text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	if (!text || json_strict_parse(text, len, 16, flags, &again, &e) ||
	    !json_object_equal(o, again))
		abort();
	json_object_put(again);
	json_object_put(o);
	return 0;
}

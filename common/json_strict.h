/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strict reading of JSON text that comes from outside kvmlu: the wire
 * (common/json_line.c), the agent's config, the journal, the kexec marker
 * and the libvirt state file. Every reader goes through here so that one
 * set of rules holds everywhere.
 *
 * json-c builds the tree. It keeps the last value of a key given twice,
 * and even in its STRICT mode it takes a few things JSON does not have
 * (single-quoted keys, Infinity, "1.", raw control characters in
 * strings), turns a lone surrogate escape into U+FFFD and clamps integers
 * past 64 bits. So a small scan of the tokens of the text json-c accepted
 * refuses all of that too, and names a duplicate key with its path.
 */
#ifndef KVMLU_COMMON_JSON_STRICT_H
#define KVMLU_COMMON_JSON_STRICT_H

#include <stddef.h>

#include <json-c/json.h>

/* Deepest nesting any reader may ask for. */
#define JSON_STRICT_DEPTH_MAX	64

/* Flags of json_strict_parse. */
#define JSON_STRICT_UTF8	0x1	/* the bytes must be valid UTF-8 */

enum json_strict_fault {
	JSON_STRICT_SYNTAX = 1,		/* not (strict) JSON, or more than one value */
	JSON_STRICT_DUPLICATE,		/* a key twice in one object */
};

struct json_strict_error {
	enum json_strict_fault fault;
	char desc[320];
};

/*
 * text[0..len) as exactly one JSON value (RFC 8259), blanks around it
 * allowed, at most depth levels (1..JSON_STRICT_DEPTH_MAX). Refused
 * besides bad syntax: a NUL byte, a key twice in one object (at any
 * depth; desc names it and its path, e.g. /args/force), a key holding
 * U+0000, a lone surrogate escape, an integer outside -2^63..2^64-1.
 *
 * 0: *out is a new reference (NULL for the JSON value null). -EINVAL:
 * e says why. -ENOMEM: out of memory (e says so too).
 */
int json_strict_parse(const char *text, size_t len, int depth, unsigned int flags,
		      json_object **out, struct json_strict_error *e);

/*
 * s shortened for an error message: at most max bytes, cut on a UTF-8
 * character boundary, "..." appended when cut. out has room for max + 4.
 */
const char *json_strict_shorten(const char *s, size_t max, char *out);

#endif /* KVMLU_COMMON_JSON_STRICT_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Strict JSON text (see json_strict.h). No lifecycle: each call parses,
 * scans and frees.
 *
 * The scan runs only over text json-c has already accepted, so it trusts
 * the structure (brackets balance, a string followed by ':' is a key) and
 * checks what json-c lets through: each token against RFC 8259, and the
 * keys of each object against each other. It decodes a key only when the
 * key has an escape, and then with json-c, so "a" and "\u0061" are the
 * same key here as in the tree. Fuzzed by tests/fuzz/fuzz_json_strict.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_strict.h"

/* Longest key shown in a message, and longest path. */
#define KEY_SHOWN	64
#define PATH_SHOWN	160

struct frame {
	json_object *keys;	/* object: the keys seen so far (a set); NULL: array */
	size_t key_at, key_end;	/* object: the raw key of the member being read */
	size_t index;		/* array: the element being read */
};

struct scan {
	const char *text;
	size_t len;
	struct frame *f;
	int top, max;
	struct json_tokener *tok;	/* decodes keys with escapes */
	char *buf;			/* a key without escapes, NUL-terminated */
	size_t cap;
	struct json_strict_error *e;
};

static int fail(struct json_strict_error *e, enum json_strict_fault fault, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct json_strict_error *e, enum json_strict_fault fault, const char *fmt, ...)
{
	va_list ap;

	e->fault = fault;
	va_start(ap, fmt);
	vsnprintf(e->desc, sizeof(e->desc), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int no_memory(struct json_strict_error *e)
{
	fail(e, JSON_STRICT_SYNTAX, "out of memory");
	return -ENOMEM;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

const char *json_strict_shorten(const char *s, size_t max, char *out)
{
	size_t n = strnlen(s, max + 1), i;
	bool cut = n > max;

	if (cut) {
		n = max;
		/* Back to the first byte of the character that would be split. */
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (i = 0; i < n; i++)
		out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	strcpy(out + n, cut ? "..." : "");
	return out;
}

static int hex4(const char *s, size_t left, unsigned int *v)
{
	*v = 0;
	if (left < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = s[i];

		if (is_digit(c))
			*v = *v << 4 | (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v = *v << 4 | (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v = *v << 4 | (unsigned int)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/*
 * The string whose quote is at i: *end just past its closing quote.
 * json-c takes raw control characters, and turns a lone surrogate into
 * U+FFFD, which would change an id on its way back: refuse both.
 */
static int scan_string(struct scan *s, size_t i, size_t *end, bool *escaped)
{
	const char *t = s->text;
	size_t j = i + 1;
	unsigned int u, lo;

	*escaped = false;
	while (j < s->len) {
		unsigned char c = (unsigned char)t[j];

		if (c == '"') {
			*end = j + 1;
			return 0;
		}
		if (c < 0x20)
			return fail(s->e, JSON_STRICT_SYNTAX,
				    "control character 0x%02x not escaped in the string at byte %zu",
				    c, i);
		if (c != '\\') {
			j++;
			continue;
		}
		*escaped = true;
		if (j + 1 >= s->len)
			break;
		c = (unsigned char)t[j + 1];
		if (c != 'u') {
			if (!c || !strchr("\"\\/bfnrt", c))
				return fail(s->e, JSON_STRICT_SYNTAX, "bad escape at byte %zu", j);
			j += 2;
			continue;
		}
		if (hex4(t + j + 2, s->len - j - 2, &u))
			return fail(s->e, JSON_STRICT_SYNTAX, "bad \\u escape at byte %zu", j);
		if (u >= 0xdc00 && u <= 0xdfff)
			return fail(s->e, JSON_STRICT_SYNTAX,
				    "lone surrogate \\u%04x at byte %zu (not a character)", u, j);
		if (u >= 0xd800 && u <= 0xdbff &&
		    (j + 7 >= s->len || t[j + 6] != '\\' || t[j + 7] != 'u' ||
		     hex4(t + j + 8, s->len - j - 8, &lo) || lo < 0xdc00 || lo > 0xdfff))
			return fail(s->e, JSON_STRICT_SYNTAX,
				    "lone surrogate \\u%04x at byte %zu (not a character)", u, j);
		j += u >= 0xd800 && u <= 0xdbff ? 12 : 6;
	}
	return fail(s->e, JSON_STRICT_SYNTAX, "unterminated string at byte %zu", i);
}

/* Digits d[0..n) beyond 2^63 (negative) or 2^64 - 1: json-c would clamp them. */
static bool beyond_64_bits(const char *d, size_t n, bool negative)
{
	const char *lim = negative ? "9223372036854775808" : "18446744073709551615";
	size_t ln = strlen(lim);

	return n != ln ? n > ln : memcmp(d, lim, n) > 0;
}

/* RFC 8259's number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(struct scan *s, size_t i, size_t *end)
{
	const char *t = s->text;
	size_t j = i, first;

	if (t[j] == '-')
		j++;
	first = j;
	if (j < s->len && t[j] == '0')
		j++;
	else if (j < s->len && is_digit(t[j]))
		while (j < s->len && is_digit(t[j]))
			j++;
	else
		goto bad;
	if (beyond_64_bits(t + first, j - first, t[i] == '-') &&
	    !(j < s->len && strchr(".eE", t[j])))
		return fail(s->e, JSON_STRICT_SYNTAX,
			    "integer at byte %zu does not fit in 64 bits", i);
	if (j < s->len && t[j] == '.') {
		if (++j >= s->len || !is_digit(t[j]))
			goto bad;
		while (j < s->len && is_digit(t[j]))
			j++;
	}
	if (j < s->len && (t[j] == 'e' || t[j] == 'E')) {
		if (++j < s->len && (t[j] == '+' || t[j] == '-'))
			j++;
		if (j >= s->len || !is_digit(t[j]))
			goto bad;
		while (j < s->len && is_digit(t[j]))
			j++;
	}
	if (j < s->len && strchr(".eE+-0123456789", t[j]))
		goto bad;
	*end = j;
	return 0;
bad:
	return fail(s->e, JSON_STRICT_SYNTAX, "number at byte %zu is not JSON", i);
}

/* true, false, null; json-c also takes Infinity. */
static int scan_word(struct scan *s, size_t i, size_t *end)
{
	const char *t = s->text + i;
	size_t n = 0;

	while (i + n < s->len && ((t[n] >= 'a' && t[n] <= 'z') || (t[n] >= 'A' && t[n] <= 'Z') ||
				   is_digit(t[n])))
		n++;
	if ((n == 4 && !memcmp(t, "true", 4)) || (n == 5 && !memcmp(t, "false", 5)) ||
	    (n == 4 && !memcmp(t, "null", 4))) {
		*end = i + n;
		return 0;
	}
	return fail(s->e, JSON_STRICT_SYNTAX, "\"%.*s\" at byte %zu is not JSON",
		    n > 16 ? 16 : (int)n, t, i);
}

/* A key with escapes, decoded by json-c: a new reference, or NULL. */
static json_object *decode(struct scan *s, size_t at, size_t end)
{
	json_object *o;

	json_tokener_reset(s->tok);
	o = json_tokener_parse_ex(s->tok, s->text + at, (int)(end - at));
	if (!o && json_tokener_get_error(s->tok) == json_tokener_continue)
		o = json_tokener_parse_ex(s->tok, "", 1);
	if (o && !json_object_is_type(o, json_type_string)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/*
 * The key text[at..end) (quotes included) as a C string: *hold owns it
 * when it was decoded. NULL when out of memory or undecodable.
 */
static const char *key_text(struct scan *s, size_t at, size_t end, bool escaped,
			    json_object **hold, size_t *len)
{
	size_t n = end - at - 2;

	*hold = NULL;
	if (escaped) {
		*hold = decode(s, at, end);
		if (!*hold)
			return NULL;
		*len = (size_t)json_object_get_string_len(*hold);
		return json_object_get_string(*hold);
	}
	if (n + 1 > s->cap) {
		char *b = realloc(s->buf, n + 1);

		if (!b)
			return NULL;
		s->buf = b;
		s->cap = n + 1;
	}
	memcpy(s->buf, s->text + at + 1, n);
	s->buf[n] = '\0';
	*len = n;
	return s->buf;
}

/* RFC 6901 pointer of the object holding the member being read, for messages. */
static void path_of(struct scan *s, char *out, size_t outlen)
{
	size_t o = 0;

	out[0] = '\0';
	for (int k = 0; k + 1 < s->top && o + 1 < outlen; k++) {
		struct frame *f = &s->f[k];
		char shown[KEY_SHOWN + 4], piece[2 * KEY_SHOWN + 8];
		const char *key;
		json_object *hold;
		size_t n, p = 0;

		if (!f->keys) {
			snprintf(piece, sizeof(piece), "/%zu", f->index);
		} else {
			key = key_text(s, f->key_at, f->key_end,
				       memchr(s->text + f->key_at, '\\', f->key_end - f->key_at) != NULL,
				       &hold, &n);
			json_strict_shorten(key ? key : "?", KEY_SHOWN, shown);
			json_object_put(hold);
			piece[p++] = '/';
			for (const char *c = shown; *c; c++) {
				if (*c == '~' || *c == '/') {
					piece[p++] = '~';
					piece[p++] = *c == '~' ? '0' : '1';
				} else {
					piece[p++] = *c;
				}
			}
			piece[p] = '\0';
		}
		n = strlen(piece);
		if (o + n >= outlen || o + n > PATH_SHOWN) {
			snprintf(out + o, outlen - o, "/...");
			return;
		}
		memcpy(out + o, piece, n + 1);
		o += n;
	}
}

/* A key of the innermost object: refused if that object has it already. */
static int scan_key(struct scan *s, size_t at, size_t end, bool escaped)
{
	struct frame *f = s->top ? &s->f[s->top - 1] : NULL;
	char shown[KEY_SHOWN + 4], path[PATH_SHOWN + 8];
	json_object *hold;
	const char *key;
	size_t n;
	int rc = 0;

	if (!f || !f->keys)
		return fail(s->e, JSON_STRICT_SYNTAX, "key outside an object at byte %zu", at);
	key = key_text(s, at, end, escaped, &hold, &n);
	if (!key)
		return no_memory(s->e);
	f->key_at = at;
	f->key_end = end;
	/* json-c cuts a key at U+0000, so "a\u0000b" would be "a". */
	if (strlen(key) != n) {
		rc = fail(s->e, JSON_STRICT_SYNTAX, "key at byte %zu holds U+0000", at);
	} else if (json_object_object_get_ex(f->keys, key, NULL)) {
		/* Copy first: path_of() reuses s->buf, which key may be. */
		json_strict_shorten(key, KEY_SHOWN, shown);
		path_of(s, path, sizeof(path));
		rc = fail(s->e, JSON_STRICT_DUPLICATE, "duplicate key \"%s\"%s%s", shown,
			  path[0] ? " in " : "", path);
	} else if (json_object_object_add(f->keys, key, NULL)) {
		rc = no_memory(s->e);
	}
	json_object_put(hold);
	return rc;
}

static bool is_key(const struct scan *s, size_t after)
{
	while (after < s->len && is_blank(s->text[after]))
		after++;
	return after < s->len && s->text[after] == ':';
}

static int scan(const char *text, size_t len, int depth, struct json_strict_error *e)
{
	struct scan s = { .text = text, .len = len, .max = depth + 1, .e = e };
	size_t i = 0, end = len;
	bool escaped;
	int rc = 0;

	s.f = calloc((size_t)s.max, sizeof(*s.f));
	s.tok = json_tokener_new();
	if (!s.f || !s.tok) {
		rc = no_memory(e);
		goto out;
	}
	while (i < len && !rc) {
		char c = text[i];

		switch (c) {
		case ' ': case '\t': case '\r': case '\n': case ':':
			i++;
			break;
		case ',':
			if (s.top && !s.f[s.top - 1].keys)
				s.f[s.top - 1].index++;
			i++;
			break;
		case '{': case '[':
			if (s.top == s.max) {
				rc = fail(e, JSON_STRICT_SYNTAX, "nested deeper than %d levels", depth);
				break;
			}
			s.f[s.top] = (struct frame){ 0 };
			if (c == '{' && !(s.f[s.top].keys = json_object_new_object())) {
				rc = no_memory(e);
				break;
			}
			s.top++;
			i++;
			break;
		case '}': case ']':
			if (!s.top) {
				rc = fail(e, JSON_STRICT_SYNTAX, "unbalanced '%c' at byte %zu", c, i);
				break;
			}
			s.top--;
			json_object_put(s.f[s.top].keys);
			s.f[s.top].keys = NULL;
			i++;
			break;
		case '"':
			rc = scan_string(&s, i, &end, &escaped);
			if (!rc && is_key(&s, end))
				rc = scan_key(&s, i, end, escaped);
			i = end;
			break;
		default:
			if (c == '-' || is_digit(c))
				rc = scan_number(&s, i, &i);
			else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
				rc = scan_word(&s, i, &i);
			else if (c > 0x20 && c < 0x7f)
				rc = fail(e, JSON_STRICT_SYNTAX, "'%c' at byte %zu is not JSON", c, i);
			else
				rc = fail(e, JSON_STRICT_SYNTAX, "byte 0x%02x at %zu is not JSON",
					  (unsigned char)c, i);
		}
	}
out:
	while (s.top > 0)
		json_object_put(s.f[--s.top].keys);
	free(s.f);
	free(s.buf);
	if (s.tok)
		json_tokener_free(s.tok);
	return rc;
}

int json_strict_parse(const char *text, size_t len, int depth, unsigned int flags,
		      json_object **out, struct json_strict_error *e)
{
	enum json_tokener_error jerr;
	struct json_tokener *tok;
	json_object *root;
	const char *nul;
	size_t end, rest;
	int rc;

	*out = NULL;
	e->fault = 0;
	e->desc[0] = '\0';
	if (depth < 1 || depth > JSON_STRICT_DEPTH_MAX)
		return fail(e, JSON_STRICT_SYNTAX, "depth %d not in 1..%d", depth,
			    JSON_STRICT_DEPTH_MAX);
	if (len > INT_MAX)
		return fail(e, JSON_STRICT_SYNTAX, "%zu bytes of JSON, too many", len);
	nul = memchr(text, '\0', len);
	if (nul)
		return fail(e, JSON_STRICT_SYNTAX, "NUL byte at %zu", (size_t)(nul - text));
	for (rest = 0; rest < len && is_blank(text[rest]); rest++)
		;
	if (rest == len)
		return fail(e, JSON_STRICT_SYNTAX, "no JSON value, only blanks");
	tok = json_tokener_new_ex(depth);
	if (!tok)
		return no_memory(e);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
				    (flags & JSON_STRICT_UTF8 ? JSON_TOKENER_VALIDATE_UTF8 : 0));
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	/* A bare number may go on; the text has ended, so tell json-c with a NUL. */
	if (!root && jerr == json_tokener_continue) {
		root = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		end = len;
	}
	json_tokener_free(tok);
	if (jerr != json_tokener_success) {
		json_object_put(root);
		if (jerr == json_tokener_continue)
			return fail(e, JSON_STRICT_SYNTAX, "incomplete JSON");
		return fail(e, JSON_STRICT_SYNTAX, "invalid JSON at byte %zu: %s", end,
			    json_tokener_error_desc(jerr));
	}
	for (rest = end; rest < len && is_blank(text[rest]); rest++)
		;
	if (rest != len) {
		json_object_put(root);
		return fail(e, JSON_STRICT_SYNTAX, "trailing data after the JSON value at byte %zu",
			    end);
	}
	rc = scan(text, end, depth, e);
	if (rc) {
		json_object_put(root);
		return rc;
	}
	*out = root;
	return 0;
}

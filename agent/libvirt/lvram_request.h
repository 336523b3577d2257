/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lvram-open exchange between kvmlu-qemu and the agent (docs/libvirt.md,
 * "Replacing a domain's QEMU"): one request line from the wrapper, one
 * answer from the agent, with the RAM memfd attached to the answer when
 * the agent holds RAM for the domain.
 *
 *   -> {"cmd":"lvram-open","args":{"uuid":"<uuid>","size":<bytes>}}
 *   <- {"ok":true,"return":{"held":true,"ignore_shared":true}}   + memfd
 *   <- {"ok":true,"return":{"held":false,"ignore_shared":false}}
 *   <- {"ok":false,"error":{"class":...,"desc":...}}
 *
 * Pure: text in, fields out. Both sides read the other's line strictly
 * (common/json_strict.c: one object, valid UTF-8, no key twice), with
 * exactly the keys above and nothing else, at most LVRAM_LINE_MAX bytes.
 */
#ifndef KVMLU_LIBVIRT_LVRAM_REQUEST_H
#define KVMLU_LIBVIRT_LVRAM_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LVRAM_LINE_MAX		512		/* bytes without the newline */
#define LVRAM_UUID_LEN		36
#define LVRAM_RAM_MAX		(16ULL << 40)	/* as kvmlu-qemu takes (QEMU_ARGV_RAM_MAX) */
#define LVRAM_DESC_MAX		256

struct lvram_request {
	char uuid[LVRAM_UUID_LEN + 1];	/* lowercase 8-4-4-4-12 */
	uint64_t size;			/* pc.ram's size: > 0, a multiple of 4096 */
};

struct lvram_reply {
	bool ok;
	bool held;			/* ok: a memfd comes with the answer */
	bool ignore_shared;		/* ok and held: the image was saved without RAM */
	char error_class[32];		/* !ok */
	char desc[LVRAM_DESC_MAX];	/* !ok, printable ASCII */
};

/* Whether s is a UUID as libvirt writes it: lowercase 8-4-4-4-12 hex. */
bool lvram_uuid_valid(const char *s);

/* text[0..len) (no newline). 0: rq filled. -EINVAL (err says why), -EMSGSIZE. */
int lvram_request_parse(const char *text, size_t len, struct lvram_request *rq,
			char *err, size_t errlen);
/* The request line for rq, with its newline. -EINVAL if rq is not valid. */
int lvram_request_format(const struct lvram_request *rq, char *buf, size_t buflen);

/* The answer line, with its newline: ok (held, ignore_shared), or an error. */
int lvram_reply_format_ok(bool held, bool ignore_shared, char *buf, size_t buflen);
int lvram_reply_format_error(const char *error_class, const char *desc, char *buf,
			     size_t buflen);
/* The agent's answer, text[0..len) with or without its newline. */
int lvram_reply_parse(const char *text, size_t len, struct lvram_reply *r,
		      char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_LVRAM_REQUEST_H */

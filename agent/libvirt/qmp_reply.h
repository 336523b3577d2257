/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What QEMU says on kvmlu's QMP socket (the one kvmlu-qemu appends,
 * docs/libvirt-ram-in-place.md section 3), read strictly: one JSON object
 * a line (common/json_line.c's rules: valid UTF-8, no key twice, bounded
 * depth), at most QMP_LINE_MAX bytes. A line is the greeting, an event,
 * a return or an error; anything else is refused. Of each answer only the
 * keys kvmlu uses are read, each checked for its type and range. Pure:
 * no I/O (qmp_client.c talks to the socket); the QEMU process is
 * untrusted, so is every byte here.
 */
#ifndef KVMLU_LIBVIRT_QMP_REPLY_H
#define KVMLU_LIBVIRT_QMP_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define QMP_LINE_MAX		(64 * 1024)	/* bytes without the newline */
#define QMP_ERROR_MAX		256		/* "Class: description", shortened */
#define QMP_MEMDEV_ID_MAX	64		/* with the NUL */
#define QMP_STATUS_MAX		32		/* with the NUL */

enum qmp_line_kind {
	QMP_LINE_GREETING,	/* {"QMP": {...}} */
	QMP_LINE_EVENT,		/* {"event": "...", ...} */
	QMP_LINE_RETURN,	/* {"return": ..., "id": N} */
	QMP_LINE_ERROR,		/* {"error": {"class", "desc"}, "id"?: N} */
};

struct qmp_line {
	enum qmp_line_kind kind;
	json_object *root;	/* owns the line's tree */
	json_object *ret;	/* return: the value (borrowed from root) */
	bool has_id;
	int64_t id;		/* return, error: the id echoed, if has_id */
	char error[QMP_ERROR_MAX];	/* error: "Class: desc", printable ASCII */
};

/*
 * text[0..len) (no newline) as one QMP line. 0: l filled, free it with
 * qmp_line_free. -EMSGSIZE: longer than QMP_LINE_MAX. -EBADMSG: not one
 * strict JSON object. -EPROTO: not a greeting, event, return or error
 * (e.g. both "return" and "error", an id that is not an integer).
 */
int qmp_line_parse(const char *text, size_t len, struct qmp_line *l, char *err, size_t errlen);
void qmp_line_free(struct qmp_line *l);

struct qmp_version {
	unsigned int major, minor, micro;
};

/* The greeting's version.qemu (each 0..65535). -EPROTO if absent or odd. */
int qmp_greeting_version(const struct qmp_line *greeting, struct qmp_version *v,
			 char *err, size_t errlen);
/* query-version's return, the same fields. */
int qmp_version_read(json_object *ret, struct qmp_version *v, char *err, size_t errlen);

struct qmp_status {
	bool running;
	char status[QMP_STATUS_MAX];	/* "running", "paused", "inmigrate", ... */
};

/* query-status's return: running (bool) and status (a lowercase word). */
int qmp_status_read(json_object *ret, struct qmp_status *s, char *err, size_t errlen);

/*
 * query-migrate-capabilities's return: the state of cap, which must be
 * listed exactly once. -ENOENT if QEMU does not list it (too old).
 */
int qmp_capability_read(json_object *ret, const char *cap, bool *on, char *err, size_t errlen);

struct qmp_memdev {
	char id[QMP_MEMDEV_ID_MAX];	/* "" when QEMU gives none */
	uint64_t size;
	bool share, prealloc;
};

/*
 * query-memdev's return into devs[0..max). -E2BIG: more than max
 * backends. Every entry needs size, share and prealloc.
 */
int qmp_memdev_read(json_object *ret, struct qmp_memdev *devs, size_t max, size_t *nr,
		    char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_QMP_REPLY_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmlu's client of a libvirt domain's QEMU, on the QMP socket kvmlu-qemu
 * added (docs/libvirt-ram-in-place.md, section 3): libvirt keeps its own
 * monitor, and this one only reads state and sets the migration
 * capability libvirt never touches (x-ignore-shared).
 *
 * Lifecycle: qmp_client_open reads the greeting and enters command mode
 * (qmp_capabilities); then one command at a time, each waiting at most
 * the client's timeout for its answer, with events skipped (at most
 * QMP_EVENTS_MAX a command); qmp_client_close. Any error but an error
 * answer from QEMU (a timeout, a closed socket, a line refused by
 * qmp_reply.c) leaves the stream in an unknown place: the client is then
 * broken and refuses every further command; open a new one.
 */
#ifndef KVMLU_LIBVIRT_QMP_CLIENT_H
#define KVMLU_LIBVIRT_QMP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/libvirt/qmp_reply.h"

#define QMP_EVENTS_MAX	1024	/* events skipped while waiting for one answer */

struct json_line_reader;

struct qmp_client {
	int fd;
	int timeout_ms;			/* for each answer, events included */
	int64_t next_id;
	bool broken;
	unsigned long events_skipped;	/* over the client's life */
	struct qmp_version version;	/* from the greeting */
	struct json_line_reader *r;
};

/*
 * Takes fd (closed by qmp_client_close, or here on failure): reads the
 * greeting, sends qmp_capabilities. timeout_ms > 0. 0 or -errno with err.
 */
int qmp_client_open(struct qmp_client *c, int fd, int timeout_ms, char *err, size_t errlen);
/* The same on a connection to the socket at path. */
int qmp_client_connect(struct qmp_client *c, const char *path, int timeout_ms,
		       char *err, size_t errlen);
void qmp_client_close(struct qmp_client *c);

/*
 * One command: {"execute":cmd,"arguments":args,"id":N} (args: NULL or an
 * object; its reference is taken). 0: *ret (if ret) is the return value,
 * a new reference. -EREMOTEIO: QEMU answered with an error ("Class:
 * desc" in err; the client stays usable). -ETIMEDOUT, -EPIPE, -EMSGSIZE,
 * -EBADMSG, -EPROTO: the client is broken.
 */
int qmp_execute(struct qmp_client *c, const char *cmd, json_object *args, json_object **ret,
		char *err, size_t errlen);

int qmp_query_version(struct qmp_client *c, struct qmp_version *v, char *err, size_t errlen);
int qmp_query_status(struct qmp_client *c, struct qmp_status *s, char *err, size_t errlen);
int qmp_migrate_set_capability(struct qmp_client *c, const char *cap, bool on,
			       char *err, size_t errlen);
int qmp_query_migrate_capability(struct qmp_client *c, const char *cap, bool *on,
				 char *err, size_t errlen);
int qmp_query_memdev(struct qmp_client *c, struct qmp_memdev *devs, size_t max, size_t *nr,
		     char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_QMP_CLIENT_H */

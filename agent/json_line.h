/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One JSON object per line over a stream socket, both ways: the shape of
 * the VMM control socket and of the agent's socket (ARCHITECTURE.md).
 * A reader owns a buffer per connection; lines longer than
 * JSON_LINE_MAX are refused (the peer is untrusted), not grown.
 */
#ifndef KVMLU_JSON_LINE_H
#define KVMLU_JSON_LINE_H

#include <stddef.h>

struct json_object;

#define JSON_LINE_MAX (256 * 1024)

struct json_line_reader {
	int fd;
	size_t len;		/* bytes in buf */
	char buf[JSON_LINE_MAX + 1];
};

void json_line_reader_init(struct json_line_reader *r, int fd);

/*
 * The next line as a parsed JSON object (*out, a new reference), waiting
 * at most timeout_ms (-1: forever). -ETIMEDOUT, -EPIPE at end of stream,
 * -EMSGSIZE for an overlong line, -EBADMSG for a line that is not one
 * JSON object.
 */
int json_line_read(struct json_line_reader *r, int timeout_ms,
		   struct json_object **out, char *err, size_t errlen);

/* Write obj as one line; all of it or -errno (EPIPE when the peer left). */
int json_line_write(int fd, struct json_object *obj);

/*
 * Connect to a UNIX socket path, waiting at most timeout_ms for the
 * connection (a busy listener). Returns the fd or -errno.
 */
int json_line_connect(const char *path, int timeout_ms, char *err, size_t errlen);

/*
 * One request, one reply: {"cmd":cmd,"id":id, extra keys...} and wait for
 * the reply with the same id, skipping event lines ({"event":...}) and
 * handing them to on_event if not NULL. On {"ok":true} *ret gets "return"
 * (a new reference, may be NULL); on {"ok":false} the error class and desc
 * go into err as "class: desc" and the return is -EREMOTEIO.
 */
int json_line_call(int fd, struct json_line_reader *r, const char *cmd,
		   struct json_object *extra, int id, int timeout_ms,
		   void (*on_event)(void *arg, struct json_object *ev), void *arg,
		   struct json_object **ret, char *err, size_t errlen);

/* The error class of the last -EREMOTEIO from json_line_call, for matching. */
#define JSON_LINE_CLASS_MAX 48
int json_line_error_class(const char *err, char out[JSON_LINE_CLASS_MAX]);

/* {"ok":true,"return":ret,"id":id} (takes ret's reference; id may be NULL). */
struct json_object *json_line_reply_ok(struct json_object *ret, struct json_object *id);
/* {"ok":false,"error":{"class":cls,"desc":desc},"id":id}. */
struct json_object *json_line_reply_error(const char *cls, const char *desc,
					  struct json_object *id);

#endif /* KVMLU_JSON_LINE_H */

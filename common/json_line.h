/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One JSON object per line over a stream socket: the agent's socket and
 * every VMM's control socket, and the live-upgrade handshake between two
 * VMMs (the shapes and names: kvmlu/control_wire.h). Every line is
 * untrusted input from a peer.
 *
 * Parsing is strict and the same everywhere (common/json_strict.h): valid
 * UTF-8, at most KVMLU_WIRE_DEPTH levels, exactly one JSON object and
 * nothing after it but blanks, no NUL byte, no key twice in one object,
 * at most KVMLU_WIRE_LINE_MAX bytes without the newline.
 * Writing has one form: no slash escaping, integers as integers (every
 * duration and time on the control sockets is integer ns), a decimal
 * rounded (json_line_new_ms), never json-c's 17-digit doubles, and only
 * valid UTF-8 (any other byte goes out as U+FFFD).
 */
#ifndef KVMLU_COMMON_JSON_LINE_H
#define KVMLU_COMMON_JSON_LINE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "kvmlu/control_wire.h"

/* A parse or request error: the class a client acts on, and why. */
struct json_line_error {
	const char *class;	/* one of KVMLU_ERR_* */
	char desc[512];
};

/* Fill e; returns -EINVAL for `return json_line_error_set(...)` chains. */
int json_line_error_set(struct json_line_error *e, const char *class, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * One line (without its newline) into *out, a new reference to an object.
 * -EINVAL with e filled (class ParseError, DuplicateKey, InvalidRequest
 * or LineTooLong).
 */
int json_line_parse(const char *line, size_t len, json_object **out,
		    struct json_line_error *e);

/*
 * A request: {"cmd":S,"id":N|S,"args":{...}}, no other key. The id is
 * echoed exactly: an integer within int64 or a string of at most
 * KVMLU_WIRE_ID_STR_MAX bytes; any other id is InvalidRequest.
 */
struct json_line_request {
	json_object *root;	/* owns everything below */
	const char *cmd;
	json_object *id;	/* NULL if absent */
	json_object *args;	/* NULL if absent; else an object */
};

/*
 * 0: req filled, free with json_line_request_free(). -EINVAL: e says why;
 * req->id is still set when the object and its id were readable, so the
 * error reply can echo it (free req in that case too).
 */
int json_line_request_parse(const char *line, size_t len, struct json_line_request *req,
			    struct json_line_error *e);
void json_line_request_free(struct json_line_request *req);

/* Replies. ok: takes ret's reference (NULL: {}). id may be NULL. */
json_object *json_line_reply_ok(json_object *ret, json_object *id);
json_object *json_line_reply_error(const char *class, const char *desc, json_object *id);

/* obj as one line with its newline, malloc'd (NULL only when out of memory). */
char *json_line_format(json_object *obj, size_t *len);
/* Write obj as one line: all of it or -errno (-EPIPE when the peer left). */
int json_line_write(int fd, json_object *obj);

/*
 * Numbers in the one form. A decimal with three places (ms to the
 * microsecond): a rate on the control sockets, ms on the live-upgrade
 * handshake and in a journal written for a person; never a duration on
 * the control sockets, which is integer ns (json_line_new_u64).
 */
json_object *json_line_new_ms(double ms);
/* Unsigned values past INT64_MAX are clamped (never negative on the wire). */
json_object *json_line_new_u64(uint64_t v);

/* Lines from one connection, up to KVMLU_WIRE_LINE_MAX bytes each without the newline. */
struct json_line_reader {
	int fd;
	size_t len;		/* bytes in buf */
	size_t used;		/* the line handed out last, with its newline */
	char buf[KVMLU_WIRE_LINE_MAX + 1];
};

void json_line_reader_init(struct json_line_reader *r, int fd);

/*
 * The next line as it came, without its newline: *line points into r and
 * stays valid until the next call. Errors as json_line_read but -EBADMSG.
 * For a server that parses the line itself (json_line_request_parse).
 */
int json_line_next(struct json_line_reader *r, int timeout_ms, const char **line, size_t *len,
		   char *err, size_t errlen);

/*
 * The next line, parsed strictly, as *out (a new reference), waiting at
 * most timeout_ms (-1: forever). -ETIMEDOUT, -EPIPE at end of stream,
 * -EMSGSIZE for an overlong line, -EBADMSG for a line that is not one
 * JSON object (err says which).
 */
int json_line_read(struct json_line_reader *r, int timeout_ms, json_object **out,
		   char *err, size_t errlen);

/*
 * Connect to a socket path or abstract name ('@', kvmlu/unix_addr.h),
 * waiting at most timeout_ms while the listener's backlog is full.
 * The fd, or -errno.
 */
int json_line_connect(const char *path, int timeout_ms, char *err, size_t errlen);

/*
 * One request, one reply: {"cmd":cmd,"id":id,"args":args} (args: NULL or
 * an object, whose reference is taken), then the reply with that id,
 * handing event lines ({"event":...}) to on_event if set. ok: *ret gets
 * "return" (a new reference). An error reply: -EREMOTEIO, "class: desc"
 * in err (json_line_error_class() reads the class back).
 */
int json_line_call(int fd, struct json_line_reader *r, const char *cmd, json_object *args,
		   int id, int timeout_ms, void (*on_event)(void *arg, json_object *ev),
		   void *arg, json_object **ret, char *err, size_t errlen);

#define JSON_LINE_CLASS_MAX 48
int json_line_error_class(const char *err, char out[JSON_LINE_CLASS_MAX]);

#endif /* KVMLU_COMMON_JSON_LINE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control protocol's wire format, shared by kvmlu-vmm's socket and
 * (same shape) the agent's: one JSON object per line each way.
 *   -> {"cmd":"pause","id":7}            id optional (integer or string), echoed
 *   -> {"cmd":"x","args":{...}}          args only for commands that take them
 *   <- {"ok":true,"return":{...},"id":7}
 *   <- {"ok":false,"error":{"class":"...","desc":"..."},"id":7}
 * Clients match on class, never on desc. Parsing is strict: anything but
 * exactly one object with known keys of the right types is an error, and
 * nothing is executed.
 */
#ifndef KVMLU_CONTROL_PROTOCOL_H
#define KVMLU_CONTROL_PROTOCOL_H

#include <stddef.h>

#include <json-c/json.h>

/* Longest request line accepted, without its newline. */
#define CONTROL_LINE_MAX	(64 * 1024)
#define CONTROL_CMD_MAX		63
#define CONTROL_ID_STR_MAX	128
#define CONTROL_JSON_DEPTH	16

/* Error classes: stable names clients may depend on. */
#define CONTROL_ERR_PARSE	"ParseError"		/* not JSON, or not one object */
#define CONTROL_ERR_INVALID	"InvalidRequest"	/* bad keys, types or args */
#define CONTROL_ERR_UNKNOWN_CMD	"UnknownCommand"
#define CONTROL_ERR_LINE_TOO_LONG "LineTooLong"
#define CONTROL_ERR_PERMISSION	"PermissionDenied"
#define CONTROL_ERR_BUSY	"Busy"			/* too many clients */
#define CONTROL_ERR_NOT_PAUSED	"NotPaused"
#define CONTROL_ERR_NOT_RUNNING	"NotRunning"
#define CONTROL_ERR_TIMEOUT	"Timeout"
#define CONTROL_ERR_FAILED	"Failed"		/* the operation itself failed */

struct control_error {
	const char *class;	/* one of CONTROL_ERR_* */
	char desc[512];
};

struct control_request {
	json_object *root;	/* owns everything below */
	const char *cmd;
	json_object *id;	/* NULL if absent */
	json_object *args;	/* NULL if absent; else an object */
};

/* Fill e; returns -EINVAL for `return control_error_set(...)` chains. */
int control_error_set(struct control_error *e, const char *class, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Parse one line (without its newline; may hold NULs, which are refused).
 * 0: req filled, free with control_request_free(). -EINVAL: e says why;
 * req->id is still set when the object and its id were readable, so the
 * error reply can echo it (free req in that case too).
 */
int control_request_parse(const char *line, size_t len, struct control_request *req,
			  struct control_error *e);
void control_request_free(struct control_request *req);

/*
 * Reply lines, newline-terminated, malloc'd (NULL only if out of memory).
 * ok: ret is consumed (NULL gives an empty object). id may be NULL.
 */
char *control_reply_ok(json_object *ret, json_object *id, size_t *len);
char *control_reply_error(const struct control_error *e, json_object *id, size_t *len);

#endif /* KVMLU_CONTROL_PROTOCOL_H */

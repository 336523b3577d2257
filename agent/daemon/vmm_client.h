/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent as a client of one VMM's control socket. Each call is its own
 * connection (connect, one request, one reply, close), so a VMM that hangs
 * costs one timeout and leaves nothing behind.
 */
#ifndef KVMLU_VMM_CLIENT_H
#define KVMLU_VMM_CLIENT_H

#include <stddef.h>

struct json_object;

/*
 * cmd on the VMM at path, reply within timeout_ms. *ret: the "return"
 * object (new reference, may be NULL). -EREMOTEIO when the VMM answered
 * with an error ("Class: desc" in err), other -errno when it did not.
 */
int vmm_client_call(const char *path, const char *cmd, int timeout_ms,
		    struct json_object **ret, char *err, size_t errlen);
/* The same with args (NULL or an object, whose reference is taken). */
int vmm_client_call_args(const char *path, const char *cmd, struct json_object *args,
			 int timeout_ms, struct json_object **ret, char *err, size_t errlen);

/*
 * Reading a reply: one key each, the names of kvmlu/control_wire.h
 * (KVMLU_KEY_*). A string, NULL if absent or not a string.
 */
const char *vmm_client_reply_str(struct json_object *ret, const char *key);
/* A non-negative integer; -1 if absent or not one. */
long long vmm_client_reply_int(struct json_object *ret, const char *key);

/*
 * A duration in ns: the integer under ns_key if the VMM sends one (NULL:
 * not looked for), else the number of milliseconds under ms_key, taken
 * from its decimal text and never through a double (1.000001 ms is
 * exactly 1000001 ns; digits below a nanosecond are dropped). 0 if
 * neither is there, negative, or 1e9 ms or more.
 */
int64_t vmm_client_reply_ns(struct json_object *ret, const char *ns_key, const char *ms_key);

/* Decimal text of a millisecond count ("12", "0.25", "1.5e3") as ns; -EINVAL if not one. */
int vmm_client_ms_text_to_ns(const char *text, int64_t *ns);

#endif /* KVMLU_VMM_CLIENT_H */

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

/* Look up a string in a reply, trying keys in order; NULL if none. */
const char *vmm_client_reply_str(struct json_object *ret, const char *const *keys);
/* Same for a non-negative integer; -1 if none. */
long long vmm_client_reply_int(struct json_object *ret, const char *const *keys);

/* A non-negative number (integer or not) in milliseconds as ns; 0 if none. */
long long vmm_client_reply_ms_as_ns(struct json_object *ret, const char *key);

#endif /* KVMLU_VMM_CLIENT_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent as a client of one VMM's control socket. Each call is its own
 * connection (connect, one request, one reply, close), so a VMM that hangs
 * costs one timeout and leaves nothing behind.
 */
#ifndef KVMLU_VMM_CLIENT_H
#define KVMLU_VMM_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* A duration in ns (the integer under key); 0 if absent, not one or negative. */
int64_t vmm_client_reply_ns(struct json_object *ret, const char *key);

/* One integer of a reply and the field it goes to. */
struct vmm_reply_field {
	const char *key;
	int64_t *field;
	/*
	 * A moment (wall ns) the agent noted itself: a reply without a
	 * positive value leaves it. Else a duration: 0 (unknown) then.
	 */
	bool keep;
};

/* Each of the n keys read once into its field, as the entry says. */
void vmm_client_reply_fields(struct json_object *ret, const struct vmm_reply_field *f, size_t n);

/*
 * 0 if a VMM's status reply says it speaks this agent's protocol
 * (KVMLU_WIRE_PROTOCOL); else -EPROTO with both versions in err. A VMM
 * without the key speaks protocol 1.
 */
int vmm_client_check_protocol(struct json_object *status, char *err, size_t errlen);

#endif /* KVMLU_VMM_CLIENT_H */

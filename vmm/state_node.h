/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One node of an untrusted state FDT (docs/state-format.md), read one
 * property at a time: each read checks the property's size exactly, and
 * each refusal names the node's path, the property and the value
 * ("state FDT /devices/virtio-net@d0001000: property "mac" is 4 bytes,
 * expected 6"). The state reader (vmm/state/state_fdt_read.c) uses it for
 * the VM's own nodes, and every device type for the node of its own
 * state (struct vm_device_type's decode, vmm/device.h), so a device
 * reads its fields beside its code and refuses them the same way.
 *
 * Nothing here allocates or touches KVM; the blob was checked whole
 * (fdt_check_full) before any node is read.
 */
#ifndef KVMLU_VMM_STATE_NODE_H
#define KVMLU_VMM_STATE_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct state_node {
	const void *fdt;
	int node;		/* offset in fdt */
	char *err;		/* where a refusal is written */
	size_t errlen;
};

/* The same blob and error buffer, another node. */
static inline struct state_node state_node_at(const struct state_node *n, int node)
{
	return (struct state_node){ .fdt = n->fdt, .node = node, .err = n->err,
				    .errlen = n->errlen };
}

/* Refuse with "state FDT <node path>: <what>"; returns -EINVAL. */
int state_node_err(const struct state_node *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Property `name`: exactly want bytes (want < 0: any length). Missing:
 * -ENOENT without a message if optional, else refused.
 */
int state_node_prop(const struct state_node *n, const char *name, int want, bool optional,
		    const void **val, int *len);
int state_node_u32(const struct state_node *n, const char *name, bool optional, uint32_t *out);
int state_node_u64(const struct state_node *n, const char *name, bool optional, uint64_t *out);
/* 0 or 1 in a u32 cell. */
int state_node_bool(const struct state_node *n, const char *name, bool *out);
/* One NUL-terminated string without embedded NULs, at most max chars (out holds max + 1). */
int state_node_str(const struct state_node *n, const char *name, bool optional, char *out,
		   size_t max);
/* Exactly size bytes, copied. */
int state_node_blob(const struct state_node *n, const char *name, bool optional, void *out,
		    int size);
/* count u64 values as 2 * count big-endian cells. */
int state_node_u64_array(const struct state_node *n, const char *name, uint64_t *out, int count);

/*
 * Child `name` with compatible `compat`; optional: -ENOENT without a
 * message. A child with another compatible is refused by name.
 */
int state_node_child(const struct state_node *n, const char *name, const char *compat,
		     bool optional, struct state_node *out);

#endif /* KVMLU_VMM_STATE_NODE_H */

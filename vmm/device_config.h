/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a VM's devices are made from: one list of device configs (struct
 * vm_device_config), the same whoever fills it: the command line
 * (vmm/options.c: --disk, --net), an upgrade's hand-over message (each
 * type's handover_read, vmm/upgrade/upgrade_devices.c) or a state after
 * a kexec (each type's reopen, vmm/resume/resume.c). struct vm_config
 * (vm_config.h) and struct resume_plan point at such a list, and
 * vm_create() makes one device of each entry (vm_virtio.c).
 *
 * An entry is its type, the fd to adopt (an upgrade's) or -1 (open from
 * the spec), and the type's own spec, opaque here. The specs of the
 * types the options parser fills are below (--disk, --net): here, below
 * both the options and the devices (vmm/devices/) that read them, so
 * that neither needs the other.
 *
 * The list is in slot order (docs/devices.md): grouped by type in the
 * order of vm_device_types (a VM's disks, then its NICs), each type's
 * entries in the order they were added. vm_device_config_add() keeps
 * it so, whatever order the entries come in.
 */
#ifndef KVMLU_VMM_DEVICE_CONFIG_H
#define KVMLU_VMM_DEVICE_CONFIG_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;
struct vm_device_type;

#define VIRTIO_BLK_ID_MAX	20	/* VIRTIO_BLK_ID_BYTES */

/* What virtio_blk_open() opens (vmm/devices/virtio_blk.h). */
struct virtio_blk_spec {
	const char *path;
	bool readonly;
	char id[VIRTIO_BLK_ID_MAX + 1];	/* "" when not given */
};

/* What identifies the disk: recorded at pause, checked after a kexec. */
struct virtio_blk_identity {
	char path[PATH_MAX];	/* absolute, as opened */
	uint64_t dev, ino;	/* st_dev, st_ino; a block device: st_rdev, 0 */
	uint64_t size;		/* bytes */
};

/*
 * A disk's entry of the config list: what --disk asked for (ident.path
 * as given), or what a state or an upgrade recorded (ident.path absolute,
 * as opened). With an fd to adopt, the file must be ident (dev, ino,
 * size); opened by path after a kexec, the restore checks it.
 */
struct virtio_blk_disk_spec {
	struct virtio_blk_identity ident;
	bool readonly;
	char id[VIRTIO_BLK_ID_MAX + 1];	/* "" when not given */
};

/*
 * A NIC's entry of the config list: what --net asked for (vmm/options.c),
 * or a state or an upgrade recorded; after creation the MAC is always set.
 */
struct virtio_net_spec {
	char tap[IFNAMSIZ];
	char bridge[IFNAMSIZ];	/* "" when not given */
	uint8_t mac[6];
	bool has_mac;		/* mac given (or generated and recorded) */
	bool no_offloads;	/* offloads=off: checksum and TSO not offered */
};

/* The most bytes of a type's spec: each type asserts its own fits. */
#define VM_DEVICE_SPEC_MAX	4352

/* One device of a VM's config. */
struct vm_device_config {
	const struct vm_device_type *type;
	/*
	 * -1: opened from the spec (a path, a tap's name). Else an upgrade's:
	 * the old process's open file, of which the device takes a dup; the
	 * list's filler keeps it and closes it.
	 */
	int fd;
	union {
		uint64_t align;
		unsigned char bytes[VM_DEVICE_SPEC_MAX];
	} spec;			/* the type's own struct (type->spec_size bytes) */
};

/* The spec of c, the struct of its type. */
static inline void *vm_device_config_spec(struct vm_device_config *c)
{
	return c->spec.bytes;
}
static inline const void *vm_device_config_spec_c(const struct vm_device_config *c)
{
	return c->spec.bytes;
}

/*
 * Put a copy of c into list (*nr entries, room for max) after the
 * entries of its type and of the types before it, so the list stays in
 * slot order. -ENOSPC when full, -EINVAL when c's type is not listed in
 * vm_device_types.
 */
int vm_device_config_add(struct vm_device_config *list, unsigned int *nr, unsigned int max,
			 const struct vm_device_config *c);
/* Entries of type t in list. */
unsigned int vm_device_config_count(const struct vm_device_config *list, unsigned int nr,
				    const struct vm_device_type *t);
/* The i-th entry of type t in list, NULL if there are fewer. */
const struct vm_device_config *vm_device_config_nth(const struct vm_device_config *list,
						    unsigned int nr,
						    const struct vm_device_type *t, unsigned int i);
/* The listed type whose kind is kind ("virtio-blk"), NULL if none. */
const struct vm_device_type *vm_device_type_find(const char *kind);

/*
 * An upgrade's device object names each fd it passes by its index in the
 * message's fds, under key: that fd, or -EPROTO when absent or no index
 * of the nr_fds received.
 */
int vm_device_handover_fd(struct json_object *o, const char *key, const int *fds,
			  unsigned int nr_fds);

/*
 * The values of a --net, also read from a state and an upgrade's message:
 * a tap's (or bridge's) name and a NIC's MAC.
 */
/* 1-15 characters of [A-Za-z0-9._-]: what IFNAMSIZ allows, without '%' templates. */
bool tap_name_valid(const char *name);
/* "52:54:00:12:34:56" (case-insensitive hex, ':' between bytes); false if not a unicast MAC. */
bool virtio_net_mac_parse(const char *s, uint8_t mac[6]);
void virtio_net_mac_format(const uint8_t mac[6], char out[18]);
/* A random locally administered unicast MAC. */
int virtio_net_mac_generate(uint8_t mac[6]);

#endif /* KVMLU_VMM_DEVICE_CONFIG_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device interface: what the VM core, the state capture and the
 * state FDT codec know of a device, so that none of them names one.
 * Each device type (virtio-blk, virtio-net) fills one struct
 * vm_device_type in its own files and is listed once in
 * vmm/devices/device_types.c; the VM holds its devices as a list of
 * struct vm_device (vm->virtio.devs, vm_virtio.h) and walks it; the
 * state reader, writer and validator walk the types (kvmtool's struct virtio_ops, Firecracker's
 * VirtioDevice with a persist.rs beside each device).
 *
 * What a device is made from: one entry of the VM's list of device
 * configs (struct vm_device_config, vmm/device_config.h), its type's own
 * spec (spec_size bytes) and an fd or -1, filled by the options parser
 * (vmm/options.c) for `run`, or by an op of its type:
 *   handover_read  on a live upgrade, in the new process: from the
 *            device's object of the old process's hand-over message,
 *            with the fd passed along
 *   reopen   after a kexec: from the device's state, to open its
 *            backing again by path or name (fds do not cross a kexec)
 *
 * Lifecycle of one device, each step an op of its type:
 *   create   inside vm_create(): opened from its config (or adopted
 *            from the old process's fd on a live upgrade), its register
 *            window and eventfds described in struct vm_device, which
 *            the VM then puts on its bus and into KVM (vm_virtio.c)
 *   start    with the vCPUs: the device's threads
 *   quiesce  at every pause, vCPUs parked: every request the guest made
 *            available has completed, nothing moves until resume
 *   resume   when the vCPUs run again
 *   sync     prepare-update: what the guest wrote made durable (optional)
 *   capture  paused and quiesced: the device's state into its state
 *            struct (state_size bytes)
 *   restore  before any vCPU runs: a validated state into a device
 *            created from the same config
 *   destroy  after the vCPUs are joined, before guest RAM goes; also what
 *            a failed create leaves to undo
 * and of its state, with no VM and no KVM:
 *   encode   its node's properties into the FDT being written
 *   decode   its node of an untrusted FDT (vmm/state_node.h)
 *   validate the values of a decoded state, before any reaches KVM
 *
 * Unhappy paths: a create that fails leaves *out NULL and nothing open;
 * the VM destroys the devices made before it. A capture of a device with
 * a request in flight is refused (-EBUSY, not quiesced). A restore
 * refuses a state of another disk, tap or MAC, and changes nothing the
 * guest sees before its checks pass.
 */
#ifndef KVMLU_VMM_DEVICE_H
#define KVMLU_VMM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct guestmem;
struct io_dev_ops;
struct state_node;
struct vm_config;
struct vm_device;
struct vm_device_config;
struct json_object;
struct virtio_mmio;

/*
 * The most bytes a type's state struct may have: a state holds each
 * device's in a slot of this size (struct state_device), and each type
 * asserts its struct fits.
 */
#define VM_DEVICE_STATE_MAX	4608

/* What `status` shows of every device alike, filled by the type's status op. */
struct vm_device_health {
	uint32_t driver_status;		/* virtio device status the driver set */
	bool device_error;
	char error[160];		/* why, when device_error */
};

/* What a type's create is given. */
struct vm_device_args {
	const struct vm_config *cfg;	/* the whole VM's: cfg->devs, all types */
	const struct vm_device_config *c;	/* this device's, of this type */
	unsigned int i;			/* the i-th device of this type in cfg */
	unsigned int slot;		/* its virtio-mmio slot (vm_virtio.h) */
	const struct guestmem *mem;
	struct vm_device *const *devs;	/* the VM's devices made before it */
	unsigned int nr_devs;
};

struct vm_device_type {
	const char *kind;		/* "virtio-blk": node names (kind@base), messages */
	const char *what, *whats;	/* "disk", "disks": the state's messages */
	const char *compat;		/* its state node's compatible */
	uint32_t format_minor;		/* the 2.x minor a state with one of these needs */
	unsigned int max;		/* of this type in one VM */

	size_t spec_size;		/* bytes of its spec, at most VM_DEVICE_SPEC_MAX */
	int (*create)(const struct vm_device_args *a, struct vm_device **out, char *err,
		      size_t errlen);
	int (*start)(struct vm_device *d, char *err, size_t errlen);
	void (*quiesce)(struct vm_device *d);
	void (*resume)(struct vm_device *d);
	int (*sync)(struct vm_device *d, char *err, size_t errlen);	/* NULL: nothing to sync */
	int (*capture)(struct vm_device *d, void *state, char *err, size_t errlen);
	int (*restore)(struct vm_device *d, const void *state, char *err, size_t errlen);
	void (*destroy)(struct vm_device *d);

	/*
	 * `status`: the reply key of the array of this type's devices
	 * (KVMLU_KEY_*, absent when the VM has none), and one device's own
	 * keys into j (after the slot, window and health every device shows,
	 * which it fills in h). Called on the control thread while the
	 * device runs.
	 */
	const char *status_key;
	void (*status)(struct vm_device *d, struct vm_device_health *h, struct json_object *j);

	/*
	 * Live upgrade, in the old process (vmm/upgrade/upgrade.c): what the
	 * new process needs to take the device over, as one object of the
	 * prepare message's array under handover_key: the fds it passes
	 * (each appended at fds[*nr_fds], *nr_fds < max_fds, its index the
	 * object's "fd") and its spec. The new process parses it
	 * (vmm/upgrade/incoming.c), so its keys are the upgrade wire's
	 * format: an old or new VMM on the other end reads them.
	 */
	const char *handover_key;
	int (*handover)(struct vm_device *d, struct json_object *o, int *fds,
			unsigned int *nr_fds, unsigned int max_fds);
	/*
	 * In the new process: the i-th object of that array, untrusted, into
	 * c (its type set, fd -1, spec zeroed): c->fd the fd it names among
	 * the nr_fds received, and the spec. -EPROTO with why in err (the
	 * old process keeps the VM).
	 */
	int (*handover_read)(struct json_object *o, const int *fds, unsigned int nr_fds,
			     unsigned int i, struct vm_device_config *c, char *err, size_t errlen);
	/*
	 * After a kexec, no fd survives: c's spec from the device's validated
	 * state (c's type set, fd -1), so that create opens its backing again
	 * by the recorded path or name. restore then refuses one that is not
	 * the one recorded (another file, tap or MAC).
	 */
	void (*reopen)(const void *state, struct vm_device_config *c);

	size_t state_size;		/* bytes of its state struct, at most VM_DEVICE_STATE_MAX */
	/* The properties after compatible, reg, slot and gsi, and any subnodes. */
	int (*encode)(void *fdt, const void *state);
	/* Into a zeroed state struct. */
	int (*decode)(const struct state_node *n, void *state);
	/*
	 * The values of one device of this type in a state (before: the
	 * nr_before of its type ahead of it, so it can refuse two sharing
	 * what must be one's own); its slot, base and GSI are the layout's
	 * to check (state_validate.c).
	 */
	int (*validate)(const void *state, const void *const *before, uint32_t nr_before,
			char *err, size_t errlen);
	/* Where in its state struct the slot, window base and GSI are. */
	size_t off_slot, off_base, off_gsi;
};

/* One device of a VM; embedded in the device's own struct. */
struct vm_device {
	const struct vm_device_type *type;
	const char *name;		/* the device's own, for messages */
	unsigned int slot;		/* virtio-mmio slot */
	unsigned int index;		/* among the VM's devices of its type */
	/* What the VM wires (vm_virtio.c): the register window and the eventfds. */
	const struct io_dev_ops *mmio_ops;
	void *mmio_ctx;
	/* The virtio state machine both transports drive (virtio-pci wraps it). */
	struct virtio_mmio *vio;
	uint64_t notify_offset;		/* a write of q here signals notify_fd[q] (KVM_IOEVENTFD) */
	unsigned int nr_notify;
	const int *notify_fd;
	int irq_fd;			/* a write is an edge on the slot's GSI (KVM_IRQFD) */
};

/*
 * Every device type, in slot order: a VM's disks first, then its NICs
 * (device_types.c, which defines nothing else).
 */
extern const struct vm_device_type *const vm_device_types[];

/* The state's slot, base and GSI of a device of type t. */
static inline uint32_t *vm_device_state_slot(const struct vm_device_type *t, void *state)
{
	return (uint32_t *)((char *)state + t->off_slot);
}
static inline uint64_t *vm_device_state_base(const struct vm_device_type *t, void *state)
{
	return (uint64_t *)((char *)state + t->off_base);
}
static inline uint32_t *vm_device_state_gsi(const struct vm_device_type *t, void *state)
{
	return (uint32_t *)((char *)state + t->off_gsi);
}

#endif /* KVMLU_VMM_DEVICE_H */

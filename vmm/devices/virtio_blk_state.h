/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The saved state of one virtio-blk device (docs/state-format.md,
 * /devices/virtio-blk@<base>): its slot in the VM's virtio-mmio layout,
 * the disk it was on and what identifies that disk, its options, and the
 * transport (vmm/virtio/virtio_mmio_state.h). Captured at pause, after
 * the device was quiesced; validated with the rest of the state;
 * restored into a device opened on the same disk (adopted fd on a live
 * upgrade, reopened by path after a kexec, identity checked).
 */
#ifndef KVMLU_VMM_DEVICES_VIRTIO_BLK_STATE_H
#define KVMLU_VMM_DEVICES_VIRTIO_BLK_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/devices/virtio_blk.h"
#include "vmm/state_node.h"
#include "vmm/virtio/virtio_mmio_state.h"

struct virtio_blk_state {
	uint32_t slot;
	uint64_t base;		/* MMIO window, as the guest found it */
	uint32_t gsi;
	struct virtio_blk_identity ident;
	bool readonly;
	char id[VIRTIO_BLK_ID_MAX + 1];
	struct virtio_mmio_state t;
};

int virtio_blk_get_state(struct virtio_blk *b, struct virtio_blk_state *s);

/* Values only (path absolute, id characters, transport); the slot is the VM's to check. */
int virtio_blk_state_validate(const struct virtio_blk_state *s, char *err, size_t errlen);

/*
 * Its node in the state FDT (docs/state-format.md): the properties after
 * the ones every device node has (struct vm_device_type's encode and
 * decode, vmm/device.h); state is a struct virtio_blk_state.
 */
int virtio_blk_state_encode(void *fdt, const void *state);
int virtio_blk_state_decode(const struct state_node *n, void *state);

/* b was opened (or adopted) on the same disk with the same options. */
int virtio_blk_set_state(struct virtio_blk *b, const struct virtio_blk_state *s,
			 char *err, size_t errlen);

#endif /* KVMLU_VMM_DEVICES_VIRTIO_BLK_STATE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The saved state of one virtio-net device (docs/state-format.md,
 * /devices/virtio-net@<base>): its slot in the VM's virtio-mmio layout,
 * the tap it runs on, the bridge that tap was added to, the MAC the
 * guest was given, and the transport (vmm/virtio/virtio_mmio_state.h).
 * Captured at pause, after the device was quiesced; validated with the
 * rest of the state; restored into a device on the same tap name with
 * the same MAC (the passed fd on a live upgrade, a tap made again by
 * name after a kexec).
 */
#ifndef KVMLU_VMM_DEVICES_VIRTIO_NET_STATE_H
#define KVMLU_VMM_DEVICES_VIRTIO_NET_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/devices/virtio_net.h"
#include "vmm/state_node.h"
#include "vmm/virtio/virtio_mmio_state.h"

struct virtio_net_state {
	uint32_t slot;
	uint64_t base;		/* MMIO window, as the guest found it */
	uint32_t gsi;
	char tap[IFNAMSIZ];
	char bridge[IFNAMSIZ];	/* "" if none */
	uint8_t mac[6];
	struct virtio_mmio_state t;
};

int virtio_net_get_state(struct virtio_net *n, struct virtio_net_state *s);

/*
 * Values only: tap and bridge names, a unicast MAC that is also the one in
 * the config bytes the guest read, the transport. The slot is the VM's.
 */
int virtio_net_state_validate(const struct virtio_net_state *s, char *err, size_t errlen);

/* Its node in the state FDT (as virtio_blk_state_encode); state is a struct virtio_net_state. */
int virtio_net_state_encode(void *fdt, const void *state);
int virtio_net_state_decode(const struct state_node *n, void *state);

/* n was opened (or adopted) on the same tap, bridge and MAC. */
int virtio_net_set_state(struct virtio_net *n, const struct virtio_net_state *s,
			 char *err, size_t errlen);

/* What to open the device with again: tap, bridge, MAC. */
void virtio_net_state_spec(const struct virtio_net_state *s, struct virtio_net_spec *spec);

#endif /* KVMLU_VMM_DEVICES_VIRTIO_NET_STATE_H */

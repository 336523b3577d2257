/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a VM's devices are made from, as the command line (vmm/options.c)
 * or a state gives it: the --disk and --net options, and what identifies
 * a disk an upgrade hands over. Here, below both the options and the
 * devices (vmm/devices/) that open what they say, so that neither needs
 * the other; struct vm_config (vm_config.h) points at them.
 */
#ifndef KVMLU_VMM_DEVICE_CONFIG_H
#define KVMLU_VMM_DEVICE_CONFIG_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#define VIRTIO_BLK_ID_MAX	20	/* VIRTIO_BLK_ID_BYTES */

/* What --disk asked for (vmm/options.c). */
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

/* What --net asked for (vmm/options.c); after creation the MAC is always set. */
struct virtio_net_spec {
	char tap[IFNAMSIZ];
	char bridge[IFNAMSIZ];	/* "" when not given */
	uint8_t mac[6];
	bool has_mac;		/* mac given (or generated and recorded) */
};

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

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tap network interface for virtio-net: /dev/net/tun with IFF_TAP |
 * IFF_NO_PI | IFF_VNET_HDR, a 12-byte vnet header (the virtio-net 1.x
 * header, struct virtio_net_hdr_v1) in front of every frame. Opened with
 * no offloads (TUNSETOFFLOAD 0: the kernel hands us whole, checksummed
 * frames); virtio-net then sets the offloads the guest driver accepted
 * with tap_set_offload() (partial checksums, TCP segments up to 64 KiB,
 * described by the vnet header). Frames we write may carry offloads
 * whatever TUNSETOFFLOAD says: the kernel finishes them.
 *
 * Lifecycle: tap_open() at VM creation (attaches to a persistent tap of
 * that name, or creates one that lives as long as the fd), brings it up
 * and adds it to a bridge if asked. Live upgrade: the fd is passed to the
 * new process, which checks it with tap_check() and never reopens the
 * name (the interface, its bridge port and its queued packets stay).
 * Host kexec: the fd dies with the old kernel; the restore calls
 * tap_open() again with the recorded name and bridge.
 *
 * Unhappy paths, each an error that names the tap and the cause: no
 * /dev/net/tun (a kernel without CONFIG_TUN), no CAP_NET_ADMIN, the name
 * taken by an interface that is not a tap or by a tap another process
 * has open, no such bridge. Nothing is left behind: a tap we created goes
 * with our fd.
 */
#ifndef KVMLU_VMM_DEVICES_TAP_H
#define KVMLU_VMM_DEVICES_TAP_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#define TAP_VNET_HDR_LEN 12	/* sizeof(struct virtio_net_hdr_v1) */

/*
 * Open (or create) tap name, nonblocking, up, and a port of bridge if
 * bridge is non-empty. *fd_out is the tap's fd on success.
 */
int tap_open(const char *name, const char *bridge, int *fd_out, char *err, size_t errlen);

/* The TUN_F_* flags virtio-net may ask for (linux/if_tun.h). */
#define TAP_OFFLOADS_ALL 0x0fu	/* TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN */

/*
 * TUNSETOFFLOAD flags (a subset of TAP_OFFLOADS_ALL): which offloaded
 * frames the kernel may hand us. Frames already queued keep what they had.
 */
int tap_set_offload(int fd, const char *name, unsigned int flags, char *err, size_t errlen);

/* fd is a tap named name, with the flags tap_open() sets (a passed fd is checked). */
int tap_check(int fd, const char *name, char *err, size_t errlen);

#endif /* KVMLU_VMM_DEVICES_TAP_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * tap interfaces (see tap.h). Each ioctl is wrapped once, here, and its
 * name is in the error. The interface flags and the bridge port are set
 * through a throwaway AF_INET datagram socket, the usual handle for
 * SIOC* interface ioctls.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/device_config.h"
#include "vmm/devices/tap.h"

#define TAP_FLAGS (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR)

_Static_assert(TAP_OFFLOADS_ALL == (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN),
	       "the offloads virtio-net sets");

static const char *tunsetiff_hint(int e)
{
	switch (e) {
	case EPERM:
		return " (creating or attaching a tap needs CAP_NET_ADMIN)";
	case EBUSY:
		return " (another process has this tap open)";
	case EINVAL:
		return " (an interface of that name exists and is not a single-queue tap)";
	}
	return "";
}

/* Up, so the kernel passes frames; on a socket made for SIOC*IF* ioctls. */
static int tap_up(int sk, const char *name, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0)
		return kvmlu_err(err, errlen, -errno, "tap %s: SIOCGIFFLAGS: %s", name,
				 strerror(errno));
	if (ifr.ifr_flags & IFF_UP)
		return 0;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr) < 0)
		return kvmlu_err(err, errlen, -errno, "tap %s: SIOCSIFFLAGS up: %s", name,
				 strerror(errno));
	return 0;
}

/* The bridge name tap is a port of, from sysfs; "" if none. */
static void tap_master(const char *name, char *out, size_t outlen)
{
	char link[PATH_MAX], path[64];
	ssize_t n;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/net/%s/master", name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	snprintf(out, outlen, "%s", basename(link));
}

static int tap_bridge(int sk, const char *name, const char *bridge, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	unsigned int index = if_nametoindex(name);
	char master[IFNAMSIZ + 1];

	if (!index)
		return kvmlu_err(err, errlen, -errno, "tap %s: if_nametoindex: %s", name,
				 strerror(errno));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", bridge);
	ifr.ifr_ifindex = (int)index;
	if (ioctl(sk, SIOCBRADDIF, &ifr) == 0)
		return 0;
	/* A persistent tap may be a port already: fine if of this bridge. */
	if (errno == EBUSY) {
		tap_master(name, master, sizeof(master));
		if (!strcmp(master, bridge))
			return 0;
		return kvmlu_err(err, errlen, -EBUSY, "tap %s: SIOCBRADDIF %s: already a port of '%s'",
				 name, bridge, master);
	}
	return kvmlu_err(err, errlen, -errno, "tap %s: SIOCBRADDIF to bridge %s: %s%s", name, bridge,
			 strerror(errno),
			 errno == ENODEV || errno == ENXIO ? " (no such bridge)" :
			 errno == EOPNOTSUPP || errno == EINVAL ? " (not a bridge)" : "");
}

int tap_open(const char *name, const char *bridge, int *fd_out, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	int fd, sk, hdr = TAP_VNET_HDR_LEN, rc;

	if (!tap_name_valid(name))
		return kvmlu_err(err, errlen, -EINVAL, "tap name '%s': use 1-15 of [A-Za-z0-9._-]",
				 name);
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "tap %s: open /dev/net/tun: %s%s", name,
				 strerror(errno),
				 errno == ENOENT || errno == ENODEV ? " (kernel without CONFIG_TUN?)" : "");
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	ifr.ifr_flags = TAP_FLAGS;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		rc = kvmlu_err(err, errlen, -errno, "tap %s: TUNSETIFF: %s%s", name, strerror(errno),
			       tunsetiff_hint(errno));
		goto err_close;
	}
	/* The 1.x header is 12 bytes (with num_buffers); the default is 10. */
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0) {
		rc = kvmlu_err(err, errlen, -errno, "tap %s: TUNSETVNETHDRSZ %d: %s", name, hdr,
			       strerror(errno));
		goto err_close;
	}
	/*
	 * No offloads until a guest driver accepts some: frames come whole
	 * and checksummed. virtio-net sets them from the acked features.
	 */
	rc = tap_set_offload(fd, name, 0, err, errlen);
	if (rc)
		goto err_close;
	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sk < 0) {
		rc = kvmlu_err(err, errlen, -errno, "tap %s: socket: %s", name, strerror(errno));
		goto err_close;
	}
	rc = tap_up(sk, name, err, errlen);
	if (!rc && bridge && bridge[0])
		rc = tap_bridge(sk, name, bridge, err, errlen);
	close(sk);
	if (rc)
		goto err_close;
	*fd_out = fd;
	return 0;
err_close:
	close(fd);
	return rc;
}

int tap_set_offload(int fd, const char *name, unsigned int flags, char *err, size_t errlen)
{
	if (flags & ~TAP_OFFLOADS_ALL)
		return kvmlu_err(err, errlen, -EINVAL, "tap %s: TUNSETOFFLOAD 0x%x: unknown flags",
				 name, flags);
	if (ioctl(fd, TUNSETOFFLOAD, (unsigned long)flags) < 0)
		return kvmlu_err(err, errlen, -errno, "tap %s: TUNSETOFFLOAD 0x%x: %s", name, flags,
				 strerror(errno));
	return 0;
}

int tap_check(int fd, const char *name, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	int hdr = 0;

	if (ioctl(fd, TUNGETIFF, &ifr) < 0)
		return kvmlu_err(err, errlen, -errno, "tap %s: passed fd: TUNGETIFF: %s", name,
				 strerror(errno));
	if (strncmp(ifr.ifr_name, name, IFNAMSIZ))
		return kvmlu_err(err, errlen, -ESTALE, "tap %s: passed fd is tap '%.16s'", name,
				 ifr.ifr_name);
	if ((ifr.ifr_flags & TAP_FLAGS) != TAP_FLAGS)
		return kvmlu_err(err, errlen, -EINVAL, "tap %s: passed fd has flags 0x%x, need 0x%x",
				 name, (unsigned int)ifr.ifr_flags, (unsigned int)TAP_FLAGS);
	if (ioctl(fd, TUNGETVNETHDRSZ, &hdr) < 0 || hdr != TAP_VNET_HDR_LEN)
		return kvmlu_err(err, errlen, -EINVAL, "tap %s: passed fd: vnet header %d bytes, need %d",
				 name, hdr, TAP_VNET_HDR_LEN);
	/* The receive path relies on reads that never block. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		return kvmlu_err(err, errlen, -errno, "tap %s: O_NONBLOCK: %s", name, strerror(errno));
	return 0;
}

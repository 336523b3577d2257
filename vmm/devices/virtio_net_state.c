// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-net state: capture, value checks, restore (see
 * virtio_net_state.h), and its node in the state FDT. The slot, base and
 * gsi are the device's place in the VM's layout (vmm/vm_virtio.h); the
 * state codec writes, reads and checks them for every device type.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "vmm/devices/virtio_net_state.h"
#include "vmm/virtio/virtio_mmio_node.h"

#define NET_CONFIG_LEN 8	/* mac[6], status */

int virtio_net_get_state(struct virtio_net *n, struct virtio_net_state *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->tap, sizeof(s->tap), "%s", n->spec.tap);
	snprintf(s->bridge, sizeof(s->bridge), "%s", n->spec.bridge);
	memcpy(s->mac, n->spec.mac, 6);
	return virtio_mmio_get_state(&n->t, &s->t);
}

void virtio_net_state_spec(const struct virtio_net_state *s, struct virtio_net_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	snprintf(spec->tap, sizeof(spec->tap), "%s", s->tap);
	snprintf(spec->bridge, sizeof(spec->bridge), "%s", s->bridge);
	memcpy(spec->mac, s->mac, 6);
	spec->has_mac = true;
}

int virtio_net_state_validate(const struct virtio_net_state *s, char *err, size_t errlen)
{
	char mac[18];

	if (!memchr(s->tap, 0, sizeof(s->tap)) || !tap_name_valid(s->tap))
		return kvmlu_err(err, errlen, -EINVAL, "tap name \"%.16s\" is not an interface name",
				 s->tap);
	if (!memchr(s->bridge, 0, sizeof(s->bridge)) ||
	    (s->bridge[0] && !tap_name_valid(s->bridge)))
		return kvmlu_err(err, errlen, -EINVAL,
				 "bridge name \"%.16s\" is not an interface name", s->bridge);
	virtio_net_mac_format(s->mac, mac);
	if ((s->mac[0] & 1) || !(s->mac[0] | s->mac[1] | s->mac[2] | s->mac[3] | s->mac[4] | s->mac[5]))
		return kvmlu_err(err, errlen, -EINVAL, "mac %s is not a unicast address", mac);
	/* The guest read its MAC from the config: the two must agree. */
	if (s->t.config_len != NET_CONFIG_LEN || memcmp(s->t.config, s->mac, 6))
		return kvmlu_err(err, errlen, -EINVAL,
				 "config (%u bytes) does not hold mac %s", s->t.config_len, mac);
	return virtio_mmio_state_validate(&s->t, VIRTIO_ID_NET, 2, err, errlen);
}

int virtio_net_set_state(struct virtio_net *n, const struct virtio_net_state *s,
			 char *err, size_t errlen)
{
	char want[18], have[18];
	int rc;

	virtio_net_mac_format(s->mac, want);
	virtio_net_mac_format(n->spec.mac, have);
	if (strcmp(s->tap, n->spec.tap) || strcmp(s->bridge, n->spec.bridge) ||
	    memcmp(s->mac, n->spec.mac, 6))
		return kvmlu_err(err, errlen, -EINVAL,
				 "%s: saved as tap '%s' bridge '%s' mac %s, opened as tap '%s' bridge '%s' mac %s",
				 n->name, s->tap, s->bridge, want, n->spec.tap, n->spec.bridge, have);
	rc = virtio_mmio_set_state(&n->t, &s->t, err, errlen);
	if (rc) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err ? err : "");
		return kvmlu_err(err, errlen, rc, "%s: %s", n->name, why);
	}
	/*
	 * The acked features came back with the transport; the tap is one
	 * tap_open() just set to no offloads (after a kexec) or the old
	 * process's (a live upgrade): either way it gets the guest's now.
	 */
	virtio_net_sync_offloads(n);
	return 0;
}

/* Bail out on the first libfdt error. */
#define TRY(x) do { int r_ = (x); if (r_ < 0) return r_; } while (0)

int virtio_net_state_encode(void *fdt, const void *state)
{
	const struct virtio_net_state *d = state;

	TRY(fdt_property_string(fdt, "tap", d->tap));
	TRY(fdt_property_string(fdt, "bridge", d->bridge));
	TRY(fdt_property(fdt, "mac", d->mac, 6));
	return virtio_mmio_node_encode(fdt, &d->t);
}

int virtio_net_state_decode(const struct state_node *n, void *state)
{
	struct virtio_net_state *d = state;
	int ret;

	ret = state_node_str(n, "tap", false, d->tap, sizeof(d->tap) - 1);
	if (!ret)
		ret = state_node_str(n, "bridge", false, d->bridge, sizeof(d->bridge) - 1);
	if (!ret)
		ret = state_node_blob(n, "mac", false, d->mac, 6);
	if (ret)
		return ret;
	return virtio_mmio_node_decode(n, &d->t);
}

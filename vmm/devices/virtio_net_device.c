// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-net's device type (see virtio_net_device.h): the ops the VM
 * calls on each NIC, made from its entry of the VM's device configs
 * (struct virtio_net_spec: the tap opened, or made, by name; the old
 * process's tap fd on a live upgrade), that entry read from the upgrade
 * wire or made from the NIC's state after a kexec, and the NIC's state
 * node. Each op is the NIC's own function
 * (virtio_net.c, virtio_net_io.c, virtio_net_state.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/json_line.h"
#include "kvmlu/control_wire.h"
#include "vmm/devices/virtio_net_device.h"
#include "vmm/devices/virtio_net_state.h"
#include "vmm/vm_config.h"

/* --net at most (vmm/options.h VMM_MAX_NETS): with the disks, the slots are 8. */
#define NET_MAX	4

struct virtio_net *virtio_net_of(struct vm_device *d)
{
	return (struct virtio_net *)((char *)d - offsetof(struct virtio_net, dev));
}

/* The NIC of its config: the old process's tap on an upgrade, else the tap opened (made) by name. */
static int net_open(struct virtio_net *n, const struct vm_device_args *a, char *err,
		    size_t errlen)
{
	struct virtio_net_spec spec;
	int fd, rc;

	memcpy(&spec, vm_device_config_spec_c(a->c), sizeof(spec));
	/* Generated once: from here the MAC travels in the state and the upgrade wire. */
	if (!spec.has_mac) {
		rc = virtio_net_mac_generate(spec.mac);
		if (rc)
			return kvmlu_err(err, errlen, rc, "tap %s: generate a MAC: %s", spec.tap,
					 strerror(-rc));
		spec.has_mac = true;
	}
	if (a->c->fd < 0)
		return virtio_net_open(n, &spec, a->mem, err, errlen);
	fd = fcntl(a->c->fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "tap %s: dup: %s", spec.tap, strerror(errno));
	rc = virtio_net_adopt(n, fd, &spec, a->mem, err, errlen);
	if (rc)
		close(fd);
	return rc;
}

static int net_create(const struct vm_device_args *a, struct vm_device **out, char *err,
		      size_t errlen)
{
	struct virtio_net *n = calloc(1, sizeof(*n));
	int rc;

	if (!n)
		return kvmlu_err(err, errlen, -ENOMEM, "allocate NIC %u", a->i);
	rc = net_open(n, a, err, errlen);
	if (rc) {
		free(n);
		return rc;
	}
	n->dev = (struct vm_device){
		.name = n->name, .mmio_ops = &virtio_mmio_ops, .mmio_ctx = &n->t,
		.vio = &n->t, .notify_offset = VIRTIO_MMIO_QUEUE_NOTIFY, .nr_notify = n->t.nr_queues,
		.notify_fd = n->t.kick_fd, .irq_fd = n->t.irq_fd,
	};
	*out = &n->dev;
	return 0;
}

static int net_start(struct vm_device *d, char *err, size_t errlen)
{
	return virtio_net_start(virtio_net_of(d), err, errlen);
}

static void net_quiesce(struct vm_device *d)
{
	virtio_net_quiesce(virtio_net_of(d));
}

static void net_resume(struct vm_device *d)
{
	virtio_net_resume(virtio_net_of(d));
}

static int net_capture(struct vm_device *d, void *state, char *err, size_t errlen)
{
	struct virtio_net *n = virtio_net_of(d);
	int rc = virtio_net_get_state(n, state);

	if (rc)
		return kvmlu_err(err, errlen, rc, "capture %s: %s", n->name,
				 rc == -EBUSY ? "a frame is in flight (not quiesced)"
					      : strerror(-rc));
	return 0;
}

static int net_restore(struct vm_device *d, const void *state, char *err, size_t errlen)
{
	return virtio_net_set_state(virtio_net_of(d), state, err, errlen);
}

static void net_destroy(struct vm_device *d)
{
	struct virtio_net *n = virtio_net_of(d);

	virtio_net_close(n);
	free(n);
}

/* Its values, and no two NICs on one tap or with one MAC. */
static int net_validate(const void *state, const void *const *before, uint32_t nr_before,
			char *err, size_t errlen)
{
	const struct virtio_net_state *s = state;
	int rc = virtio_net_state_validate(s, err, errlen);

	if (rc)
		return rc;
	for (uint32_t j = 0; j < nr_before; j++) {
		const struct virtio_net_state *o = before[j];

		if (!strcmp(o->tap, s->tap) || !memcmp(o->mac, s->mac, 6))
			return kvmlu_err(err, errlen, -EINVAL, "NICs %u and %u share a tap or a MAC",
					 j, nr_before);
	}
	return 0;
}

static void net_status(struct vm_device *dev, struct vm_device_health *h, json_object *j)
{
	struct virtio_net_info d;

	virtio_net_info(virtio_net_of(dev), &d);
	h->driver_status = d.status;
	h->device_error = d.device_error;
	snprintf(h->error, sizeof(h->error), "%s", d.error);
	json_object_object_add(j, KVMLU_KEY_TAP, json_object_new_string(d.tap));
	json_object_object_add(j, KVMLU_KEY_BRIDGE, d.bridge[0] ? json_object_new_string(d.bridge) : NULL);
	json_object_object_add(j, KVMLU_KEY_MAC, json_object_new_string(d.mac));
	json_object_object_add(j, KVMLU_KEY_RX_PACKETS, json_line_new_u64(d.rx_packets));
	json_object_object_add(j, KVMLU_KEY_RX_BYTES, json_line_new_u64(d.rx_bytes));
	json_object_object_add(j, KVMLU_KEY_RX_DROPPED, json_line_new_u64(d.rx_dropped));
	json_object_object_add(j, KVMLU_KEY_TX_PACKETS, json_line_new_u64(d.tx_packets));
	json_object_object_add(j, KVMLU_KEY_TX_BYTES, json_line_new_u64(d.tx_bytes));
	json_object_object_add(j, KVMLU_KEY_TX_DROPPED, json_line_new_u64(d.tx_dropped));
}

/* The upgrade wire's NIC: its tap fd, the tap, bridge and MAC. */
static int net_handover(struct vm_device *dev, json_object *d, int *fds, unsigned int *nr_fds,
			unsigned int max_fds)
{
	const struct virtio_net *n = virtio_net_of(dev);
	char mac[18];

	if (*nr_fds >= max_fds)
		return -E2BIG;
	virtio_net_mac_format(n->spec.mac, mac);
	json_object_object_add(d, "fd", json_object_new_int64((int)*nr_fds));
	fds[(*nr_fds)++] = n->fd;
	json_object_object_add(d, "tap", json_object_new_string(n->spec.tap));
	json_object_object_add(d, "bridge", json_object_new_string(n->spec.bridge));
	json_object_object_add(d, "mac", json_object_new_string(mac));
	return 0;
}

/* An interface name from a hand-over object ("" allowed only if optional). */
static bool get_ifname(json_object *o, const char *key, bool optional, char out[IFNAMSIZ])
{
	json_object *v;
	const char *str;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return false;
	str = json_object_get_string(v);
	if (!(optional && !str[0]) && !tap_name_valid(str))
		return false;
	memcpy(out, str, strlen(str) + 1);	/* valid: < IFNAMSIZ */
	return true;
}

/* The new process's read of net_handover's object (the wire's format, old and new). */
static int net_handover_read(json_object *o, const int *fds, unsigned int nr_fds, unsigned int i,
			     struct vm_device_config *c, char *err, size_t errlen)
{
	struct virtio_net_spec *sp = vm_device_config_spec(c);
	json_object *v;

	c->fd = vm_device_handover_fd(o, "fd", fds, nr_fds);
	if (c->fd < 0)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: NIC %u: bad fd", i);
	if (!get_ifname(o, "tap", false, sp->tap) || !get_ifname(o, "bridge", true, sp->bridge))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: NIC %u: bad tap or bridge", i);
	if (!json_object_object_get_ex(o, "mac", &v) || !json_object_is_type(v, json_type_string) ||
	    !virtio_net_mac_parse(json_object_get_string(v), sp->mac))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: NIC %u: bad mac", i);
	sp->has_mac = true;
	return 0;
}

/*
 * After a kexec: the tap fd did not cross it, and a tap we created went
 * with its fd: make it again by the recorded name, on the recorded
 * bridge, with the recorded MAC. A tap that cannot be made fails the
 * build (tap_open() names it).
 */
static void net_reopen(const void *state, struct vm_device_config *c)
{
	virtio_net_state_spec(state, vm_device_config_spec(c));
}

_Static_assert(sizeof(struct virtio_net_spec) <= VM_DEVICE_SPEC_MAX,
	       "a NIC's spec must fit a device config");
_Static_assert(sizeof(struct virtio_net_state) <= VM_DEVICE_STATE_MAX,
	       "a NIC's state must fit a state's device slot");

const struct vm_device_type virtio_net_type = {
	.kind = "virtio-net", .what = "NIC", .whats = "NICs",
	.compat = "kvmlu,virtio-net-v1", .format_minor = 1, .max = NET_MAX,
	.spec_size = sizeof(struct virtio_net_spec), .create = net_create, .start = net_start,
	.quiesce = net_quiesce, .resume = net_resume, .sync = NULL,
	.capture = net_capture, .restore = net_restore, .destroy = net_destroy,
	.state_size = sizeof(struct virtio_net_state),
	.encode = virtio_net_state_encode, .decode = virtio_net_state_decode,
	.validate = net_validate,
	.status_key = KVMLU_KEY_NETS, .status = net_status,
	.handover_key = "nets", .handover = net_handover,
	.handover_read = net_handover_read, .reopen = net_reopen,
	.off_slot = offsetof(struct virtio_net_state, slot),
	.off_base = offsetof(struct virtio_net_state, base),
	.off_gsi = offsetof(struct virtio_net_state, gsi),
};

void virtio_net_info(struct virtio_net *n, struct virtio_net_info *out)
{
	memset(out, 0, sizeof(*out));
	out->tap = n->spec.tap;
	out->bridge = n->spec.bridge;
	virtio_net_mac_format(n->spec.mac, out->mac);
	out->rx_packets = __atomic_load_n(&n->rx_packets, __ATOMIC_RELAXED);
	out->rx_bytes = __atomic_load_n(&n->rx_bytes, __ATOMIC_RELAXED);
	out->rx_dropped = __atomic_load_n(&n->rx_dropped, __ATOMIC_RELAXED);
	out->tx_packets = __atomic_load_n(&n->tx_packets, __ATOMIC_RELAXED);
	out->tx_bytes = __atomic_load_n(&n->tx_bytes, __ATOMIC_RELAXED);
	out->tx_dropped = __atomic_load_n(&n->tx_dropped, __ATOMIC_RELAXED);
	pthread_mutex_lock(&n->t.lock);
	out->status = n->t.status;
	out->device_error = n->t.broken;
	snprintf(out->error, sizeof(out->error), "%s", n->t.broken_why);
	pthread_mutex_unlock(&n->t.lock);
}

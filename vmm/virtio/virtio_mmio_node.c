// SPDX-License-Identifier: GPL-2.0
/*
 * The transport's part of a virtio device's state node (see
 * virtio_mmio_node.h). Queue subnodes are named queue@N with reg N; a
 * queue given twice or beyond VIRTIO_MMIO_MAX_QUEUES is refused here,
 * one the device does not have by the device's validate.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <string.h>

#include "vmm/virtio/virtio_mmio_node.h"

/* Bail out on the first libfdt error. */
#define TRY(x) do { int r_ = (x); if (r_ < 0) return r_; } while (0)

static int encode_queue(void *fdt, unsigned int i, const struct virtio_mmio_queue_state *q)
{
	char node[16];

	snprintf(node, sizeof(node), "queue@%u", i);
	TRY(fdt_begin_node(fdt, node));
	TRY(fdt_property_string(fdt, "compatible", VIRTIO_MMIO_NODE_COMPAT_QUEUE));
	TRY(fdt_property_u32(fdt, "reg", i));
	TRY(fdt_property_u32(fdt, "size", q->size));
	TRY(fdt_property_u32(fdt, "ready", q->ready));
	TRY(fdt_property_u64(fdt, "desc", q->desc));
	TRY(fdt_property_u64(fdt, "driver", q->avail));
	TRY(fdt_property_u64(fdt, "device", q->used));
	TRY(fdt_property_u32(fdt, "last-avail", q->last_avail));
	TRY(fdt_property_u32(fdt, "used-idx", q->used_idx));
	return fdt_end_node(fdt);
}

int virtio_mmio_node_encode(void *fdt, const struct virtio_mmio_state *t)
{
	TRY(fdt_property_u32(fdt, "device-id", t->device_id));
	TRY(fdt_property_u64(fdt, "device-features", t->device_features));
	TRY(fdt_property_u64(fdt, "driver-features", t->driver_features));
	TRY(fdt_property_u32(fdt, "device-features-sel", t->device_features_sel));
	TRY(fdt_property_u32(fdt, "driver-features-sel", t->driver_features_sel));
	TRY(fdt_property_u32(fdt, "queue-sel", t->queue_sel));
	TRY(fdt_property_u32(fdt, "status", t->status));
	TRY(fdt_property_u32(fdt, "interrupt-status", t->interrupt_status));
	TRY(fdt_property_u32(fdt, "config-generation", t->config_generation));
	TRY(fdt_property_u32(fdt, "device-error", t->broken));
	TRY(fdt_property(fdt, "config", t->config, (int)t->config_len));
	for (uint32_t i = 0; i < t->nr_queues && i < VIRTIO_MMIO_MAX_QUEUES; i++)
		TRY(encode_queue(fdt, i, &t->q[i]));
	return 0;
}

static int decode_queue(const struct state_node *n, struct virtio_mmio_state *t)
{
	struct virtio_mmio_queue_state *q;
	uint32_t index;
	int ret;

	if (fdt_node_check_compatible(n->fdt, n->node, VIRTIO_MMIO_NODE_COMPAT_QUEUE))
		return state_node_err(n, "not a \"%s\"", VIRTIO_MMIO_NODE_COMPAT_QUEUE);
	ret = state_node_u32(n, "reg", false, &index);
	if (ret)
		return ret;
	if (index >= VIRTIO_MMIO_MAX_QUEUES)
		return state_node_err(n, "queue index %u out of range (at most %d queues)", index,
				      VIRTIO_MMIO_MAX_QUEUES);
	q = &t->q[index];
	if (q->present)
		return state_node_err(n, "queue index %u given twice", index);
	q->present = true;
	ret = state_node_u32(n, "size", false, &q->size);
	if (!ret)
		ret = state_node_bool(n, "ready", &q->ready);
	if (!ret)
		ret = state_node_u64(n, "desc", false, &q->desc);
	if (!ret)
		ret = state_node_u64(n, "driver", false, &q->avail);
	if (!ret)
		ret = state_node_u64(n, "device", false, &q->used);
	if (!ret)
		ret = state_node_u32(n, "last-avail", false, &q->last_avail);
	if (!ret)
		ret = state_node_u32(n, "used-idx", false, &q->used_idx);
	if (ret)
		return ret;
	t->nr_queues++;
	return 0;
}

int virtio_mmio_node_decode(const struct state_node *n, struct virtio_mmio_state *t)
{
	const void *v = NULL;
	int len = 0, ret, q;

	ret = state_node_u32(n, "device-id", false, &t->device_id);
	if (!ret)
		ret = state_node_u64(n, "device-features", false, &t->device_features);
	if (!ret)
		ret = state_node_u64(n, "driver-features", false, &t->driver_features);
	if (!ret)
		ret = state_node_u32(n, "device-features-sel", false, &t->device_features_sel);
	if (!ret)
		ret = state_node_u32(n, "driver-features-sel", false, &t->driver_features_sel);
	if (!ret)
		ret = state_node_u32(n, "queue-sel", false, &t->queue_sel);
	if (!ret)
		ret = state_node_u32(n, "status", false, &t->status);
	if (!ret)
		ret = state_node_u32(n, "interrupt-status", false, &t->interrupt_status);
	if (!ret)
		ret = state_node_u32(n, "config-generation", false, &t->config_generation);
	if (!ret)
		ret = state_node_bool(n, "device-error", &t->broken);
	if (!ret)
		ret = state_node_prop(n, "config", -1, false, &v, &len);
	if (ret)
		return ret;
	if (len > VIRTIO_MMIO_CONFIG_MAX)
		return state_node_err(n, "property \"config\" is %d bytes, at most %d", len,
				      VIRTIO_MMIO_CONFIG_MAX);
	memcpy(t->config, v, (size_t)len);
	t->config_len = (uint32_t)len;
	fdt_for_each_subnode(q, n->fdt, n->node) {
		struct state_node qn = state_node_at(n, q);

		ret = decode_queue(&qn, t);
		if (ret)
			return ret;
	}
	if (q < 0 && q != -FDT_ERR_NOTFOUND)
		return state_node_err(n, "bad subnodes (%s)", fdt_strerror(q));
	return 0;
}

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

/* u32 cells, big-endian as every FDT integer. */
static int put_cells(void *fdt, const char *name, const uint32_t *v, unsigned int n)
{
	fdt32_t c[4 * (VIRTIO_MMIO_MAX_QUEUES + 1)];

	for (unsigned int i = 0; i < n; i++)
		c[i] = cpu_to_fdt32(v[i]);
	return fdt_property(fdt, name, c, (int)(n * sizeof(c[0])));
}

static int encode_pci(void *fdt, const struct virtio_pci_fn_state *p)
{
	TRY(fdt_begin_node(fdt, "pci"));
	TRY(fdt_property_string(fdt, "compatible", VIRTIO_MMIO_NODE_COMPAT_PCI));
	TRY(fdt_property_u32(fdt, "command", p->command));
	TRY(fdt_property_u64(fdt, "bar0", (uint64_t)p->bar0_hi << 32 | p->bar0_lo));
	TRY(fdt_property_u32(fdt, "interrupt-line", p->int_line));
	TRY(fdt_property_u32(fdt, "msix-control", p->msix_ctrl));
	TRY(put_cells(fdt, "msix-table", &p->msix[0][0],
		      4 * (p->nr_vectors <= VIRTIO_MMIO_MAX_QUEUES + 1 ? p->nr_vectors : 0)));
	TRY(fdt_property_u32(fdt, "msix-pba", p->pba));
	TRY(fdt_property_u32(fdt, "config-vector", p->config_vector));
	TRY(put_cells(fdt, "queue-vectors", p->queue_vector, VIRTIO_MMIO_MAX_QUEUES));
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
	if (t->pci.present)
		TRY(encode_pci(fdt, &t->pci));
	return 0;
}

/* count u32 cells at most max, into out; the count through *n. */
static int get_cells(const struct state_node *n, const char *name, uint32_t *out,
		     unsigned int max, unsigned int *got)
{
	const void *v;
	int len, ret = state_node_prop(n, name, -1, false, &v, &len);

	if (ret)
		return ret;
	if (len % 4 || (unsigned int)len / 4 > max)
		return state_node_err(n, "property \"%s\" is %d bytes: whole cells, at most %u",
				      name, len, max);
	for (int i = 0; i < len / 4; i++)
		out[i] = fdt32_ld((const fdt32_t *)v + i);
	*got = (unsigned int)len / 4;
	return 0;
}

static int decode_pci(const struct state_node *n, struct virtio_pci_fn_state *p)
{
	unsigned int cells, qv;
	uint64_t bar;
	int ret;

	if (p->present)
		return state_node_err(n, "a second pci node");
	p->present = true;
	ret = state_node_u32(n, "command", false, &p->command);
	if (!ret)
		ret = state_node_u64(n, "bar0", false, &bar);
	if (!ret)
		ret = state_node_u32(n, "interrupt-line", false, &p->int_line);
	if (!ret)
		ret = state_node_u32(n, "msix-control", false, &p->msix_ctrl);
	if (!ret)
		ret = get_cells(n, "msix-table", &p->msix[0][0], 4 * (VIRTIO_MMIO_MAX_QUEUES + 1),
				&cells);
	if (!ret)
		ret = state_node_u32(n, "msix-pba", false, &p->pba);
	if (!ret)
		ret = state_node_u32(n, "config-vector", false, &p->config_vector);
	if (!ret)
		ret = get_cells(n, "queue-vectors", p->queue_vector, VIRTIO_MMIO_MAX_QUEUES, &qv);
	if (ret)
		return ret;
	if (cells % 4)
		return state_node_err(n, "property \"msix-table\" is not whole entries (%u cells)",
				      cells);
	if (qv != VIRTIO_MMIO_MAX_QUEUES)
		return state_node_err(n, "property \"queue-vectors\" has %u cells, not %d", qv,
				      VIRTIO_MMIO_MAX_QUEUES);
	p->nr_vectors = cells / 4;
	p->bar0_lo = (uint32_t)bar;
	p->bar0_hi = (uint32_t)(bar >> 32);
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
		const char *name = fdt_get_name(n->fdt, q, NULL);

		if (name && !strcmp(name, "pci")) {
			if (fdt_node_check_compatible(n->fdt, q, VIRTIO_MMIO_NODE_COMPAT_PCI))
				return state_node_err(&qn, "not a \"%s\"", VIRTIO_MMIO_NODE_COMPAT_PCI);
			ret = decode_pci(&qn, &t->pci);
			if (ret)
				return ret;
			continue;
		}
		ret = decode_queue(&qn, t);
		if (ret)
			return ret;
	}
	if (q < 0 && q != -FDT_ERR_NOTFOUND)
		return state_node_err(n, "bad subnodes (%s)", fdt_strerror(q));
	return 0;
}

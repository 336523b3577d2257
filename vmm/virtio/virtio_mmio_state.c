// SPDX-License-Identifier: GPL-2.0
/*
 * Capture, validation and restore of a virtio-mmio transport's state
 * (see virtio_mmio_state.h). The state comes from another process or
 * from before a kexec: every field is checked against what the spec and
 * the device allow before the transport takes it, and a restore that
 * fails leaves the transport as it was initialised.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/virtio/virtio_mmio_state.h"

#define STATUS_KNOWN (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | \
		      VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_FEATURES_OK | \
		      VIRTIO_STATUS_NEEDS_RESET | VIRTIO_STATUS_FAILED)

int virtio_mmio_get_state(struct virtio_mmio *t, struct virtio_mmio_state *s)
{
	int rc = 0;

	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&t->lock);
	if (t->inflight) {
		rc = -EBUSY;
		goto out;
	}
	s->device_id = t->device_id;
	s->device_features = t->device_features;
	s->driver_features = t->driver_features;
	s->device_features_sel = t->device_features_sel;
	s->driver_features_sel = t->driver_features_sel;
	s->queue_sel = t->queue_sel;
	s->status = t->status;
	s->interrupt_status = t->interrupt_status;
	s->config_generation = t->config_generation;
	s->broken = t->broken;
	s->nr_queues = t->nr_queues;
	for (unsigned int i = 0; i < t->nr_queues; i++) {
		const struct virtq *q = &t->queues[i];

		s->q[i] = (struct virtio_mmio_queue_state){
			.present = true, .size = q->size, .ready = q->ready,
			.desc = q->desc_gpa, .avail = q->avail_gpa, .used = q->used_gpa,
			.last_avail = q->last_avail, .used_idx = q->used_idx,
		};
	}
	s->config_len = t->config_len;
	memcpy(s->config, t->config, t->config_len);
	if (t->xport_get)
		t->xport_get(t->irq_ctx, &s->pci);
out:
	pthread_mutex_unlock(&t->lock);
	return rc;
}

static int validate_queue(const struct virtio_mmio_queue_state *q, unsigned int i,
			  char *err, size_t errlen)
{
	if (q->size > 0xffff)
		return kvmlu_err(err, errlen, -EINVAL, "queue %u: size %u is not 16-bit", i, q->size);
	if (q->ready && (q->size == 0 || q->size > VIRTQ_MAX_SIZE || (q->size & (q->size - 1))))
		return kvmlu_err(err, errlen, -EINVAL,
				 "queue %u: ready with size %u, not a power of two in 1..%d", i,
				 q->size, VIRTQ_MAX_SIZE);
	if (q->last_avail > 0xffff || q->used_idx > 0xffff)
		return kvmlu_err(err, errlen, -EINVAL,
				 "queue %u: index out of range (last-avail %u, used-idx %u, 16-bit)",
				 i, q->last_avail, q->used_idx);
	/* Captured quiesced: everything taken was given back. */
	if (q->last_avail != q->used_idx)
		return kvmlu_err(err, errlen, -EINVAL,
				 "queue %u: last-avail %u != used-idx %u: a request was in flight",
				 i, q->last_avail, q->used_idx);
	if (!q->ready && (q->last_avail || q->used_idx))
		return kvmlu_err(err, errlen, -EINVAL, "queue %u: indices of a queue not ready", i);
	return 0;
}

int virtio_mmio_state_validate(const struct virtio_mmio_state *s, uint32_t device_id,
			       uint32_t nr_queues, char *err, size_t errlen)
{
	int rc;

	if (s->device_id != device_id)
		return kvmlu_err(err, errlen, -EINVAL, "device id %u, expected %u", s->device_id,
				 device_id);
	if (s->nr_queues != nr_queues)
		return kvmlu_err(err, errlen, -EINVAL, "%u queues, the device has %u",
				 s->nr_queues, nr_queues);
	if (!(s->device_features & (1ULL << VIRTIO_F_VERSION_1)))
		return kvmlu_err(err, errlen, -EINVAL, "device features 0x%llx lack VERSION_1",
				 (unsigned long long)s->device_features);
	if (s->driver_features & ~s->device_features)
		return kvmlu_err(err, errlen, -EINVAL,
				 "driver features 0x%llx not offered (device 0x%llx)",
				 (unsigned long long)s->driver_features,
				 (unsigned long long)s->device_features);
	if (s->status & ~STATUS_KNOWN)
		return kvmlu_err(err, errlen, -EINVAL, "status 0x%x has unknown bits", s->status);
	if ((s->status & VIRTIO_STATUS_FEATURES_OK) &&
	    !(s->driver_features & (1ULL << VIRTIO_F_VERSION_1)))
		return kvmlu_err(err, errlen, -EINVAL, "status FEATURES_OK without VERSION_1");
	if ((s->status & VIRTIO_STATUS_DRIVER_OK) && !(s->status & VIRTIO_STATUS_FEATURES_OK))
		return kvmlu_err(err, errlen, -EINVAL, "status DRIVER_OK without FEATURES_OK");
	if (s->broken != !!(s->status & VIRTIO_STATUS_NEEDS_RESET))
		return kvmlu_err(err, errlen, -EINVAL, "device error and NEEDS_RESET disagree");
	if (s->interrupt_status & ~(VIRTIO_INT_USED_RING | VIRTIO_INT_CONFIG))
		return kvmlu_err(err, errlen, -EINVAL, "interrupt status 0x%x has unknown bits",
				 s->interrupt_status);
	if (s->config_len > VIRTIO_MMIO_CONFIG_MAX)
		return kvmlu_err(err, errlen, -EINVAL, "config is %u bytes, at most %d",
				 s->config_len, VIRTIO_MMIO_CONFIG_MAX);
	for (unsigned int i = 0; i < nr_queues; i++) {
		if (!s->q[i].present)
			return kvmlu_err(err, errlen, -EINVAL, "queue %u missing", i);
		rc = validate_queue(&s->q[i], i, err, errlen);
		if (rc)
			return rc;
	}
	if (s->pci.present)
		return virtio_pci_fn_state_validate(&s->pci, nr_queues, err, errlen);
	return 0;
}

int virtio_mmio_set_state(struct virtio_mmio *t, const struct virtio_mmio_state *s,
			  char *err, size_t errlen)
{
	struct virtq q[VIRTIO_MMIO_MAX_QUEUES];
	char why[128];
	int rc;

	rc = virtio_mmio_state_validate(s, t->device_id, t->nr_queues, err, errlen);
	if (rc)
		return rc;
	if (s->driver_features & ~t->device_features)
		return kvmlu_err(err, errlen, -EINVAL,
				 "the guest uses features 0x%llx, this device offers 0x%llx",
				 (unsigned long long)s->driver_features,
				 (unsigned long long)t->device_features);
	if (s->config_len != t->config_len || memcmp(s->config, t->config, t->config_len))
		return kvmlu_err(err, errlen, -EINVAL,
				 "device config differs from the saved one (the guest saw other values)");
	if (s->pci.present != (t->xport_set != NULL))
		return kvmlu_err(err, errlen, -EINVAL,
				 "the state is of a virtio-%s device, this VM's is virtio-%s",
				 s->pci.present ? "pci" : "mmio", t->xport_set ? "pci" : "mmio");
	/* Queues first, on copies: a ring outside RAM refuses the whole state. */
	for (unsigned int i = 0; i < t->nr_queues; i++) {
		virtq_reset(&q[i]);
		q[i].size = (uint16_t)s->q[i].size;
		q[i].desc_gpa = s->q[i].desc;
		q[i].avail_gpa = s->q[i].avail;
		q[i].used_gpa = s->q[i].used;
		q[i].last_avail = (uint16_t)s->q[i].last_avail;
		q[i].used_idx = (uint16_t)s->q[i].used_idx;
		/* The ring features follow from the negotiated ones: nothing more is saved. */
		virtq_set_features(&q[i], s->driver_features);
		if (s->q[i].ready && virtq_enable(&q[i], t->mem, why, sizeof(why)))
			return kvmlu_err(err, errlen, -EINVAL, "queue %u: %s", i, why);
	}
	pthread_mutex_lock(&t->lock);
	memcpy(t->queues, q, sizeof(q[0]) * t->nr_queues);
	/*
	 * The device goes on offering what it offered (a NIC made with
	 * offloads=off stays so across an upgrade or a kexec, whose configs
	 * do not carry that), never more than this build can do.
	 */
	t->device_features &= s->device_features;
	t->driver_features = s->driver_features;
	t->device_features_sel = s->device_features_sel;
	t->driver_features_sel = s->driver_features_sel;
	t->queue_sel = s->queue_sel;
	t->status = s->status;
	t->interrupt_status = s->interrupt_status;
	t->config_generation = s->config_generation;
	t->broken = s->broken;
	if (t->broken)
		snprintf(t->broken_why, sizeof(t->broken_why), "device error before the restore");
	if (t->xport_set)
		t->xport_set(t->irq_ctx, &s->pci);
	/*
	 * An interrupt the driver had not yet acknowledged is raised again: the
	 * edge may have been lost with the old irqfd, and one too many is
	 * harmless (the driver reads InterruptStatus). A kick makes the
	 * device thread look at its rings once.
	 */
	if ((t->status & VIRTIO_STATUS_DRIVER_OK) && !t->broken) {
		/*
		 * Not on virtio-pci: its MSIs went into the LAPICs, whose state
		 * travels with the vCPUs; interrupt_status is only its ISR there.
		 */
		if (t->interrupt_status && !t->irq_hook) {
			uint64_t one = 1;

			if (write(t->irq_fd, &one, sizeof(one)) < 0) {
				/* full counter: already pending */
			}
		}
		for (unsigned int i = 0; i < t->nr_queues; i++) {
			uint64_t one = 1;

			if (write(t->kick_fd[i], &one, sizeof(one)) < 0) {
				/* full counter: already pending */
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
	return 0;
}

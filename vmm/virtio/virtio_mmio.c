// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-mmio version 2 registers and their state machine (see
 * virtio_mmio.h). Every register access comes from a vCPU thread through
 * the I/O bus and takes the transport lock; the device thread takes it
 * only to pop and push, never while it does I/O, so a vCPU waits at most
 * for a ring walk.
 *
 * A device reset (Status = 0) waits for the chains in flight: the spec
 * says the device has finished with every buffer once reset completes,
 * and the driver frees them right after.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "vmm/virtio/virtio_mmio.h"

static void mmio_io_read(void *dev, uint64_t off, uint8_t *data, unsigned int len)
{
	virtio_mmio_read(dev, off, data, len);
}

static void mmio_io_write(void *dev, uint64_t off, const uint8_t *data, unsigned int len)
{
	virtio_mmio_write(dev, off, data, len);
}

const struct io_dev_ops virtio_mmio_ops = {
	.read = mmio_io_read,
	.write = mmio_io_write,
};

static void signal_fd(int fd)
{
	uint64_t one = 1;

	/* Nonblocking eventfd: fails only when the counter is full, i.e. already pending. */
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
	}
}

/* Called with the lock held. */
static void raise_irq(struct virtio_mmio *t, uint32_t why, unsigned int src)
{
	t->interrupt_status |= why;
	t->interrupts++;
	if (t->irq_hook)
		t->irq_hook(t->irq_ctx, src);
	else
		signal_fd(t->irq_fd);
}

int virtio_mmio_init(struct virtio_mmio *t, const char *name, uint32_t device_id,
		     uint64_t features, unsigned int nr_queues, const void *config,
		     uint32_t config_len, const struct guestmem *mem)
{
	unsigned int i;
	int rc;

	memset(t, 0, sizeof(*t));
	t->irq_fd = -1;
	for (i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
		t->kick_fd[i] = -1;
	if (nr_queues == 0 || nr_queues > VIRTIO_MMIO_MAX_QUEUES ||
	    config_len > VIRTIO_MMIO_CONFIG_MAX)
		return -EINVAL;
	t->name = name;
	t->mem = mem;
	t->device_id = device_id;
	t->device_features = features | (1ULL << VIRTIO_F_VERSION_1);
	t->nr_queues = nr_queues;
	memcpy(t->config, config, config_len);
	t->config_len = config_len;
	for (i = 0; i < nr_queues; i++) {
		t->kick_fd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->kick_fd[i] < 0)
			goto err_fds;
	}
	t->irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->irq_fd < 0)
		goto err_fds;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->idle, NULL);
	return 0;
err_fds:
	rc = -errno;
	for (i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
		if (t->kick_fd[i] >= 0)
			close(t->kick_fd[i]);
	memset(t, 0, sizeof(*t));
	t->irq_fd = -1;
	for (i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
		t->kick_fd[i] = -1;
	return rc;
}

void virtio_mmio_destroy(struct virtio_mmio *t)
{
	unsigned int i;

	if (!t->nr_queues)
		return;
	for (i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
		if (t->kick_fd[i] >= 0)
			close(t->kick_fd[i]);
	if (t->irq_fd >= 0)
		close(t->irq_fd);
	pthread_cond_destroy(&t->idle);
	pthread_mutex_destroy(&t->lock);
	t->nr_queues = 0;
}

bool virtio_mmio_feature(const struct virtio_mmio *t, unsigned int bit)
{
	return bit < 64 && (t->driver_features >> bit) & 1;
}

static bool live(const struct virtio_mmio *t)
{
	return (t->status & VIRTIO_STATUS_DRIVER_OK) && !t->broken;
}

static void wait_idle(struct virtio_mmio *t)
{
	while (t->inflight)
		pthread_cond_wait(&t->idle, &t->lock);
}

static void device_error_locked(struct virtio_mmio *t, const char *why)
{
	if (t->broken)
		return;
	t->broken = true;
	snprintf(t->broken_why, sizeof(t->broken_why), "%s", why);
	fprintf(stderr, "kvmlu-vmm: %s: device error, needs reset: %s\n",
		t->name ? t->name : "virtio", why);
	t->status |= VIRTIO_STATUS_NEEDS_RESET;
	/* Only a driver that is live looks at the config interrupt. */
	if (t->status & VIRTIO_STATUS_DRIVER_OK)
		raise_irq(t, VIRTIO_INT_CONFIG, VIRTIO_IRQ_SRC_CONFIG);
}

void virtio_mmio_device_error(struct virtio_mmio *t, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&t->lock);
	device_error_locked(t, why);
	pthread_mutex_unlock(&t->lock);
}

/* Status = 0: back to power-on, once nothing is in flight. */
static void reset_locked(struct virtio_mmio *t)
{
	unsigned int i;

	wait_idle(t);
	for (i = 0; i < t->nr_queues; i++)
		virtq_reset(&t->queues[i]);
	t->driver_features = 0;
	t->device_features_sel = t->driver_features_sel = 0;
	t->queue_sel = 0;
	t->status = 0;
	t->interrupt_status = 0;
	t->broken = false;
	t->broken_why[0] = '\0';
}

static void write_status(struct virtio_mmio *t, uint32_t v)
{
	uint32_t added;
	unsigned int i;

	if (v == 0) {
		reset_locked(t);
		return;
	}
	/* The device owns NEEDS_RESET; a driver never clears a bit but by reset. */
	v = (v & ~VIRTIO_STATUS_NEEDS_RESET) | (t->status & VIRTIO_STATUS_NEEDS_RESET);
	added = v & ~t->status;
	v |= t->status;
	if (added & VIRTIO_STATUS_FEATURES_OK) {
		/* Accept only what we offer, and only virtio 1.x drivers. */
		if ((t->driver_features & ~t->device_features) ||
		    !virtio_mmio_feature(t, VIRTIO_F_VERSION_1) ||
		    !(t->status & VIRTIO_STATUS_DRIVER))
			v &= ~VIRTIO_STATUS_FEATURES_OK;
	}
	if ((added & VIRTIO_STATUS_DRIVER_OK) && !(v & VIRTIO_STATUS_FEATURES_OK))
		v &= ~VIRTIO_STATUS_DRIVER_OK;
	t->status = v;
	/* Buffers made available before DRIVER_OK are looked at now. */
	if ((added & v & VIRTIO_STATUS_DRIVER_OK))
		for (i = 0; i < t->nr_queues; i++)
			signal_fd(t->kick_fd[i]);
}

static struct virtq *selected(struct virtio_mmio *t)
{
	return t->queue_sel < t->nr_queues ? &t->queues[t->queue_sel] : NULL;
}

/* Queue setup registers count only between FEATURES_OK and the queue's enable. */
static struct virtq *setup_queue(struct virtio_mmio *t)
{
	struct virtq *q = selected(t);

	if (!q || q->ready || !(t->status & VIRTIO_STATUS_FEATURES_OK) || t->broken)
		return NULL;
	return q;
}

static void set_low(uint64_t *r, uint32_t v)
{
	*r = (*r & ~0xffffffffULL) | v;
}

static void set_high(uint64_t *r, uint32_t v)
{
	*r = (*r & 0xffffffffULL) | ((uint64_t)v << 32);
}

static void write_queue_ready(struct virtio_mmio *t, uint32_t v)
{
	struct virtq *q = selected(t);
	char why[128];

	if (!q)
		return;
	if (v == 0) {
		/* The driver takes the queue back: finish what it gave us first. */
		wait_idle(t);
		virtq_reset(q);
		return;
	}
	if (q->ready || !setup_queue(t))
		return;
	/* FEATURES_OK is set (setup_queue): the ring features are final. */
	virtq_set_features(q, t->driver_features);
	if (virtq_enable(q, t->mem, why, sizeof(why)))
		device_error_locked(t, why);
}

static uint32_t read_reg(struct virtio_mmio *t, uint64_t off)
{
	struct virtq *q = selected(t);

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return VIRTIO_MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION_REG:
		return VIRTIO_MMIO_VERSION;
	case VIRTIO_MMIO_DEVICE_ID:
		return t->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return VIRTIO_MMIO_VENDOR;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		if (t->device_features_sel > 1)
			return 0;
		return (uint32_t)(t->device_features >> (32 * t->device_features_sel));
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return q ? VIRTQ_MAX_SIZE : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return q ? q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return t->interrupt_status;
	case VIRTIO_MMIO_STATUS:
		return t->status;
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return t->config_generation;
	case VIRTIO_MMIO_SHM_LEN_LOW:
	case VIRTIO_MMIO_SHM_LEN_HIGH:
	case VIRTIO_MMIO_SHM_BASE_LOW:
	case VIRTIO_MMIO_SHM_BASE_HIGH:
		/* All ones: "no such shared memory region" (4.2.2.1). */
		return 0xffffffffu;
	}
	return 0;
}

static void write_reg(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
	struct virtq *q;

	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		t->device_features_sel = v;
		return;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		/* Only while negotiating: after FEATURES_OK the set is fixed. */
		if (!(t->status & VIRTIO_STATUS_DRIVER) || (t->status & VIRTIO_STATUS_FEATURES_OK))
			return;
		if (t->driver_features_sel == 0)
			set_low(&t->driver_features, v);
		else if (t->driver_features_sel == 1)
			set_high(&t->driver_features, v);
		return;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		t->driver_features_sel = v;
		return;
	case VIRTIO_MMIO_QUEUE_SEL:
		t->queue_sel = v;
		return;
	case VIRTIO_MMIO_QUEUE_READY:
		write_queue_ready(t, v);
		return;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		/* Only reached when the ioeventfd did not take it. */
		if (v < t->nr_queues)
			signal_fd(t->kick_fd[v]);
		return;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		t->interrupt_status &= ~v;
		return;
	case VIRTIO_MMIO_STATUS:
		write_status(t, v);
		return;
	}
	q = setup_queue(t);
	if (!q)
		return;
	switch (off) {
	case VIRTIO_MMIO_QUEUE_NUM:
		/* Checked at QueueReady: a 16-bit field must not silently truncate. */
		q->size = v > 0xffff ? 0 : (uint16_t)v;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
		set_low(&q->desc_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		set_high(&q->desc_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_DRIVER_LOW:
		set_low(&q->avail_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_DRIVER_HIGH:
		set_high(&q->avail_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_DEVICE_LOW:
		set_low(&q->used_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_DEVICE_HIGH:
		set_high(&q->used_gpa, v);
		break;
	}
}

uint32_t virtio_mmio_reg_read_locked(struct virtio_mmio *t, uint64_t off)
{
	return off < VIRTIO_MMIO_CONFIG && off % 4 == 0 ? read_reg(t, off) : 0;
}

void virtio_mmio_reg_write_locked(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
	if (off < VIRTIO_MMIO_CONFIG && off % 4 == 0)
		write_reg(t, off, v);
}

void virtio_mmio_read(struct virtio_mmio *t, uint64_t off, uint8_t *data, unsigned int len)
{
	uint32_t v;

	memset(data, 0, len);
	pthread_mutex_lock(&t->lock);
	if (off >= VIRTIO_MMIO_CONFIG) {
		uint64_t c = off - VIRTIO_MMIO_CONFIG;

		if (c < t->config_len && len <= t->config_len - c)
			memcpy(data, t->config + c, len);
	} else if (len == 4 && off % 4 == 0) {
		/* The spec allows only aligned 32-bit access below the config space. */
		v = read_reg(t, off);
		memcpy(data, &v, 4);
	}
	pthread_mutex_unlock(&t->lock);
}

void virtio_mmio_write(struct virtio_mmio *t, uint64_t off, const uint8_t *data,
		       unsigned int len)
{
	uint32_t v;

	/* Config writes are ignored: no feature we offer makes a field writable. */
	if (off >= VIRTIO_MMIO_CONFIG || len != 4 || off % 4)
		return;
	memcpy(&v, data, 4);
	pthread_mutex_lock(&t->lock);
	write_reg(t, off, v);
	pthread_mutex_unlock(&t->lock);
}

int virtio_mmio_pop(struct virtio_mmio *t, unsigned int qi, struct virtq_chain *c)
{
	char why[160];
	int rc = 0;

	pthread_mutex_lock(&t->lock);
	if (qi < t->nr_queues && live(t)) {
		rc = virtq_pop(&t->queues[qi], c, why, sizeof(why));
		if (rc < 0) {
			device_error_locked(t, why);
			rc = 0;
		} else if (rc > 0) {
			t->inflight++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void virtio_mmio_unpop(struct virtio_mmio *t, unsigned int qi, unsigned int n)
{
	pthread_mutex_lock(&t->lock);
	/* In flight, so no reset ran since the pops (a reset waits for inflight 0). */
	if (qi < t->nr_queues && n <= t->inflight) {
		virtq_unpop(&t->queues[qi], (uint16_t)n);
		t->inflight -= n;
		if (!t->inflight)
			pthread_cond_broadcast(&t->idle);
	}
	pthread_mutex_unlock(&t->lock);
}

unsigned int virtio_mmio_queue_size(struct virtio_mmio *t, unsigned int qi)
{
	unsigned int n = 0;

	pthread_mutex_lock(&t->lock);
	if (qi < t->nr_queues)
		n = t->queues[qi].size;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void virtio_mmio_push(struct virtio_mmio *t, unsigned int qi, uint16_t head, uint32_t len,
		      bool interrupt)
{
	pthread_mutex_lock(&t->lock);
	/* After a device error the ring is not trusted: complete, but do not write it. */
	if (qi < t->nr_queues && !t->broken)
		virtq_push(&t->queues[qi], head, len);
	if (interrupt && !t->broken && qi < t->nr_queues &&
	    virtq_need_interrupt(&t->queues[qi]))
		raise_irq(t, VIRTIO_INT_USED_RING, qi);
	if (t->inflight && --t->inflight == 0)
		pthread_cond_broadcast(&t->idle);
	pthread_mutex_unlock(&t->lock);
}

void virtio_mmio_notify(struct virtio_mmio *t, unsigned int qi)
{
	pthread_mutex_lock(&t->lock);
	/* Not for a device reset since its last push: that driver has nothing to hear. */
	if (qi < t->nr_queues && live(t) && t->queues[qi].ready &&
	    virtq_need_interrupt(&t->queues[qi]))
		raise_irq(t, VIRTIO_INT_USED_RING, qi);
	pthread_mutex_unlock(&t->lock);
}

static unsigned int pending(struct virtio_mmio *t, unsigned int qi, bool arm)
{
	int n = 0;

	pthread_mutex_lock(&t->lock);
	if (qi < t->nr_queues && live(t))
		n = arm ? virtq_pending_arm(&t->queues[qi]) : virtq_pending(&t->queues[qi]);
	pthread_mutex_unlock(&t->lock);
	return n > 0 ? (unsigned int)n : 0;
}

unsigned int virtio_mmio_pending_arm(struct virtio_mmio *t, unsigned int qi)
{
	return pending(t, qi, true);
}

unsigned int virtio_mmio_pending(struct virtio_mmio *t, unsigned int qi)
{
	return pending(t, qi, false);
}

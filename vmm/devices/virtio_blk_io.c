// SPDX-License-Identifier: GPL-2.0
/*
 * The I/O thread and workers of one virtio-blk device, and quiesce (see
 * virtio_blk.h).
 *
 * The I/O thread sleeps in poll() on the queue's kick eventfd
 * (KVM_IOEVENTFD: the guest's notify lands here without a vCPU exit to
 * userspace), on done_fd (workers completed requests) and on ctl_fd
 * (stop, quiesce). On a kick it takes every available request into a free
 * slot (VIRTIO_BLK_INFLIGHT of them, a full ring) and queues it for the
 * workers; it never waits for I/O. VIRTIO_BLK_WORKERS workers each do one
 * request's I/O at a time (preadv/pwritev/fdatasync, blocking) and put it
 * in the used ring as soon as it is done, so requests complete out of
 * order and a slow one does not hold back the others. On done_fd the I/O
 * thread raises one interrupt for every completion since the last one
 * (if the driver wants it: EVENT_IDX's used_event), then takes more
 * requests if slots were all busy.
 *
 * Quiesce (the handshake is device_thread.c's): the caller (the VM's
 * pause, vCPUs already parked, so no new request can appear) asks and
 * waits; the thread takes every request still in the ring, waits until
 * nr_inflight is 0 (every worker finished and pushed), raises the
 * interrupt and acknowledges. Every request the guest made available before the pause
 * has then completed exactly once and is in the used ring, which is
 * guest RAM and travels with it: nothing is lost, nothing is delivered
 * twice, nothing is left half done for the state capture. How long it
 * takes is bounded by the requests in flight times one I/O's time (less
 * with the workers in parallel). A device that is broken (device error)
 * or not yet live has nothing to drain.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/virtio_blk.h"

int virtio_blk_io_init(struct virtio_blk *b)
{
	b->reqs = calloc(VIRTIO_BLK_INFLIGHT, sizeof(*b->reqs));
	if (!b->reqs)
		return -ENOMEM;
	for (unsigned int i = 0; i < VIRTIO_BLK_INFLIGHT; i++) {
		b->reqs[i].next = b->free_reqs;
		b->free_reqs = &b->reqs[i];
	}
	pthread_cond_init(&b->work, NULL);
	return 0;
}

int virtio_blk_take(struct virtio_blk *b, struct virtio_blk_req **out)
{
	struct virtio_blk_req *r;

	pthread_mutex_lock(&b->lock);
	r = b->free_reqs;
	if (r)
		b->free_reqs = r->next;
	pthread_mutex_unlock(&b->lock);
	if (!r)
		return 0;
	if (virtio_mmio_pop(&b->t, 0, &r->chain) <= 0) {
		pthread_mutex_lock(&b->lock);
		r->next = b->free_reqs;
		b->free_reqs = r;
		pthread_mutex_unlock(&b->lock);
		return 0;
	}
	pthread_mutex_lock(&b->lock);
	b->nr_inflight++;
	pthread_mutex_unlock(&b->lock);
	*out = r;
	return 1;
}

void virtio_blk_complete(struct virtio_blk *b, struct virtio_blk_req *r)
{
	int len = virtio_blk_handle(b, &r->chain);

	if (len < 0) {
		virtio_mmio_device_error(&b->t, "request at head %u has no header or status byte",
					 r->chain.head);
		len = 0;
	}
	virtio_mmio_push(&b->t, 0, r->chain.head, (uint32_t)len, false);
	/* Before the count drops: once it is 0, no signal for it is still to come. */
	device_thread_wake(b->done_fd);
	pthread_mutex_lock(&b->lock);
	r->next = b->free_reqs;
	b->free_reqs = r;
	if (--b->nr_inflight == 0)
		pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/*
 * Completions between two interrupts at most when the caller's thread
 * does the I/O: a guest that keeps the ring busy must still hear of its
 * completions (it cannot reuse descriptors before it does).
 */
#define BLK_IRQ_BATCH 16

void virtio_blk_process(struct virtio_blk *b)
{
	struct virtio_blk_req *r;
	unsigned int batch = 0;

	while (virtio_blk_take(b, &r) > 0) {
		virtio_blk_complete(b, r);
		/* One interrupt for a batch: when the ring ran dry, or the batch is full. */
		if (++batch == BLK_IRQ_BATCH || virtio_mmio_pending(&b->t, 0) == 0) {
			virtio_mmio_notify(&b->t, 0);
			batch = 0;
		}
	}
}

/* Hand r to a worker. */
static void blk_queue_work(struct virtio_blk *b, struct virtio_blk_req *r)
{
	pthread_mutex_lock(&b->lock);
	r->next = NULL;
	if (b->work_tail)
		b->work_tail->next = r;
	else
		b->work_head = r;
	b->work_tail = r;
	pthread_cond_signal(&b->work);
	pthread_mutex_unlock(&b->lock);
}

/* Everything available, up to the free slots, to the workers. */
static void blk_submit(struct virtio_blk *b)
{
	struct virtio_blk_req *r;

	while (virtio_blk_take(b, &r) > 0)
		blk_queue_work(b, r);
}

static void *blk_worker(void *arg)
{
	struct virtio_blk *b = arg;
	struct virtio_blk_req *r;

	for (;;) {
		pthread_mutex_lock(&b->lock);
		while (!b->work_head && !b->workers_stop)
			pthread_cond_wait(&b->work, &b->lock);
		/* Stop only with nothing queued: a taken request is always completed. */
		r = b->work_head;
		if (!r) {
			pthread_mutex_unlock(&b->lock);
			return NULL;
		}
		b->work_head = r->next;
		if (!b->work_head)
			b->work_tail = NULL;
		pthread_mutex_unlock(&b->lock);
		virtio_blk_complete(b, r);
	}
}

/* Quiesce, in the I/O thread: the ring empty and nothing in flight. */
static void blk_drain(struct virtio_blk *b)
{
	for (;;) {
		blk_submit(b);
		pthread_mutex_lock(&b->lock);
		while (b->nr_inflight)
			pthread_cond_wait(&b->cond, &b->lock);
		pthread_mutex_unlock(&b->lock);
		/* The slots were all busy while the ring had more: take those too. */
		if (virtio_mmio_pending(&b->t, 0) == 0)
			break;
	}
	/* Their signals are in; the interrupt for them is this one. */
	device_thread_drain_fd(b->done_fd);
	virtio_mmio_notify(&b->t, 0);
}

/* device_thread_control()'s drain: blk_drain() in the I/O thread. */
static void blk_drain_cb(void *arg)
{
	blk_drain(arg);
}

static void *blk_thread(void *arg)
{
	struct virtio_blk *b = arg;
	struct pollfd pfd[3] = {
		{ .fd = b->t.kick_fd[0], .events = POLLIN },
		{ .fd = b->done_fd, .events = POLLIN },
		{ .fd = b->io.ctl_fd, .events = POLLIN },
	};
	char tname[16];

	snprintf(tname, sizeof(tname), "blk-%.11s", b->name + strlen("virtio-blk "));
	pthread_setname_np(pthread_self(), tname);
	for (;;) {
		if (poll(pfd, 3, -1) < 0 && errno != EINTR) {
			/* Not expected with three valid eventfds; the guest's disk stops. */
			virtio_mmio_device_error(&b->t, "I/O thread: poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents) {
			/* One interrupt for everything completed since the last. */
			device_thread_drain_fd(pfd[1].fd);
			virtio_mmio_notify(&b->t, 0);
		}
		if (pfd[0].revents || pfd[1].revents) {
			/* A kick, or slots freed while the ring may still hold requests. */
			if (pfd[0].revents)
				device_thread_drain_fd(pfd[0].fd);
			blk_submit(b);
		}
		/* A disk needs no pause of its own: the parked vCPUs make no request. */
		if (pfd[2].revents && !device_thread_control(&b->io, blk_drain_cb, b))
			break;
	}
	device_thread_exit(&b->io);
	return NULL;
}

/* Stop the workers once the queue is empty (nothing adds to it now), and wait for them. */
static void blk_stop_workers(struct virtio_blk *b)
{
	pthread_mutex_lock(&b->lock);
	b->workers_stop = true;
	pthread_cond_broadcast(&b->work);
	pthread_mutex_unlock(&b->lock);
	for (unsigned int i = 0; i < b->nr_workers; i++)
		pthread_join(b->workers[i], NULL);
	b->nr_workers = 0;
}

int virtio_blk_start(struct virtio_blk *b, char *err, size_t errlen)
{
	int rc;

	b->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->done_fd < 0)
		return kvmlu_err(err, errlen, -errno, "%s: eventfd: %s", b->name, strerror(errno));
	for (unsigned int i = 0; i < VIRTIO_BLK_WORKERS; i++) {
		rc = pthread_create(&b->workers[i], NULL, blk_worker, b);
		if (rc) {
			blk_stop_workers(b);
			b->workers_stop = false;
			return kvmlu_err(err, errlen, -rc, "%s: I/O worker: %s", b->name,
					 strerror(rc));
		}
		b->nr_workers++;
	}
	rc = device_thread_start(&b->io, b->name, blk_thread, b, err, errlen);
	if (rc) {
		blk_stop_workers(b);
		b->workers_stop = false;
	}
	return rc;
}

void virtio_blk_io_fini(struct virtio_blk *b)
{
	/* The I/O thread first: it drains nothing more once stopping. */
	device_thread_stop(&b->io);
	if (b->nr_workers)
		blk_stop_workers(b);
	/* Only a device that was opened has slots, and only then a done_fd. */
	if (b->reqs) {
		pthread_cond_destroy(&b->work);
		free(b->reqs);
		b->reqs = NULL;
		b->free_reqs = NULL;
		if (b->done_fd >= 0)
			close(b->done_fd);
		b->done_fd = -1;
	}
}

void virtio_blk_quiesce(struct virtio_blk *b)
{
	if (!device_thread_quiesce(&b->io))
		virtio_blk_process(b);
}

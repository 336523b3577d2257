// SPDX-License-Identifier: GPL-2.0
/*
 * The I/O thread of one virtio-blk device, and quiesce (see
 * virtio_blk.h). The thread sleeps in poll() on the queue's kick
 * eventfd (KVM_IOEVENTFD: the guest's notify lands here without a vCPU
 * exit to userspace) and on ctl_fd (stop, quiesce). On a kick it handles
 * requests one at a time, synchronously (preadv/pwritev/fdatasync), until
 * the ring is empty; the interrupt is raised once per batch (at most
 * BLK_IRQ_BATCH completions).
 *
 * Quiesce: the caller (the VM's pause, vCPUs already parked, so no new
 * request can appear) bumps quiesce_req and wakes the thread; the thread
 * empties the ring and acknowledges. Every request the guest made
 * available before the pause has then completed and is in the used ring,
 * which is guest RAM and travels with it: nothing is lost, nothing is
 * left half done for the state capture. A device that is broken (device
 * error) or not yet live has nothing to drain.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/virtio_blk.h"

static void drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing pending, which is fine */
	}
}

/*
 * Completions between two interrupts at most: a guest that keeps the ring
 * busy must still hear of its completions (it cannot reuse descriptors
 * before it does).
 */
#define BLK_IRQ_BATCH 16

void virtio_blk_process(struct virtio_blk *b)
{
	unsigned int batch = 0;

	while (virtio_mmio_pop(&b->t, 0, &b->chain) > 0) {
		int len = virtio_blk_handle(b, &b->chain);
		bool last;

		if (len < 0) {
			virtio_mmio_device_error(&b->t,
						 "request at head %u has no header or status byte",
						 b->chain.head);
			len = 0;
		}
		/* One interrupt for a batch: when the ring ran dry, or the batch is full. */
		last = ++batch == BLK_IRQ_BATCH || virtio_mmio_pending(&b->t, 0) == 0;
		virtio_mmio_push(&b->t, 0, b->chain.head, (uint32_t)len, last);
		if (last)
			batch = 0;
	}
}

static void *blk_thread(void *arg)
{
	struct virtio_blk *b = arg;
	struct pollfd pfd[2] = {
		{ .fd = b->t.kick_fd[0], .events = POLLIN },
		{ .fd = b->ctl_fd, .events = POLLIN },
	};
	char tname[16];
	uint64_t req;

	snprintf(tname, sizeof(tname), "blk-%.11s", b->name + strlen("virtio-blk "));
	pthread_setname_np(pthread_self(), tname);
	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR) {
			/* Not expected with two valid eventfds; the guest's disk stops. */
			virtio_mmio_device_error(&b->t, "I/O thread: poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents) {
			drain_fd(pfd[0].fd);
			virtio_blk_process(b);
		}
		if (!pfd[1].revents)
			continue;
		drain_fd(pfd[1].fd);
		pthread_mutex_lock(&b->lock);
		if (b->stop) {
			pthread_mutex_unlock(&b->lock);
			break;
		}
		req = b->quiesce_req;
		pthread_mutex_unlock(&b->lock);
		virtio_blk_process(b);
		pthread_mutex_lock(&b->lock);
		b->quiesce_done = req;
		pthread_cond_broadcast(&b->cond);
		pthread_mutex_unlock(&b->lock);
	}
	/* A quiescer must not wait for a thread that is gone. */
	pthread_mutex_lock(&b->lock);
	b->quiesce_done = UINT64_MAX;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

int virtio_blk_start(struct virtio_blk *b, char *err, size_t errlen)
{
	int rc;

	b->ctl_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->ctl_fd < 0)
		return kvmlu_err(err, errlen, -errno, "%s: eventfd: %s", b->name, strerror(errno));
	rc = pthread_create(&b->thread, NULL, blk_thread, b);
	if (rc)
		return kvmlu_err(err, errlen, -rc, "%s: I/O thread: %s", b->name, strerror(rc));
	b->thread_started = true;
	return 0;
}

void virtio_blk_quiesce(struct virtio_blk *b)
{
	uint64_t one = 1, req;

	if (!b->thread_started) {
		virtio_blk_process(b);
		return;
	}
	pthread_mutex_lock(&b->lock);
	req = ++b->quiesce_req;
	pthread_mutex_unlock(&b->lock);
	if (write(b->ctl_fd, &one, sizeof(one)) < 0) {
		/* full counter: the thread is already being woken */
	}
	pthread_mutex_lock(&b->lock);
	while (b->quiesce_done < req)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

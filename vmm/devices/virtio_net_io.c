// SPDX-License-Identifier: GPL-2.0
/*
 * The thread of one virtio-net device, and pause (see virtio_net.h).
 * It sleeps in poll() on the two queues' kick eventfds (KVM_IOEVENTFD:
 * no vCPU exit), on the tap when the guest has posted receive buffers,
 * and on ctl_fd (stop, quiesce, resume). The tap is not polled while the
 * receive ring is empty: its frames wait in the kernel's queue (and are
 * dropped there when it is full, as any NIC does) until the guest kicks
 * the receive queue.
 *
 * Quiesce (vCPUs already parked, so no chain appears): the thread sends
 * and completes every available transmit chain, sets paused and
 * acknowledges. While paused it moves nothing: the used rings stay as
 * the state capture saw them, and a frame that arrives waits in the tap
 * (across a live upgrade the same tap fd, queue included, goes to the
 * new process; across a kexec the tap and its queue are gone, a drop TCP
 * recovers from). Resume clears paused and looks at both rings once.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/virtio_net.h"

static void drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing pending */
	}
}

static void wake(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* full counter: already being woken */
	}
}

/*
 * Stop, quiesce, resume. Paused while a quiesce has not been answered by
 * a resume (resume_req is the quiesce_req it answers). Returns false to
 * end the thread.
 */
static bool net_control(struct virtio_net *n)
{
	uint64_t req;
	bool quiesce;

	pthread_mutex_lock(&n->lock);
	if (n->stop) {
		pthread_mutex_unlock(&n->lock);
		return false;
	}
	req = n->quiesce_req;
	quiesce = req > n->quiesce_done;
	pthread_mutex_unlock(&n->lock);
	/* vCPUs are parked: this empties the transmit ring for good. */
	if (quiesce)
		virtio_net_tx(n);
	pthread_mutex_lock(&n->lock);
	n->paused = n->resume_req < n->quiesce_req;
	if (quiesce) {
		n->quiesce_done = req;
		pthread_cond_broadcast(&n->cond);
	}
	pthread_mutex_unlock(&n->lock);
	return true;
}

static void *net_thread(void *arg)
{
	struct virtio_net *n = arg;
	char tname[16];

	snprintf(tname, sizeof(tname), "net-%.11s", n->spec.tap);
	pthread_setname_np(pthread_self(), tname);
	for (;;) {
		struct pollfd pfd[4] = {
			{ .fd = n->ctl_fd, .events = POLLIN },
			{ .fd = n->t.kick_fd[VIRTIO_NET_RXQ], .events = POLLIN },
			{ .fd = n->t.kick_fd[VIRTIO_NET_TXQ], .events = POLLIN },
			{ .fd = n->fd, .events = POLLIN },
		};
		unsigned int nfds;
		bool paused;

		pthread_mutex_lock(&n->lock);
		paused = n->paused;
		pthread_mutex_unlock(&n->lock);
		/* Paused: only ctl. Running: the tap only when there is somewhere to put a frame. */
		nfds = paused ? 1 :
		       !n->tap_failed && virtio_mmio_pending(&n->t, VIRTIO_NET_RXQ) ? 4 : 3;
		if (poll(pfd, nfds, -1) < 0) {
			if (errno == EINTR)
				continue;
			virtio_mmio_device_error(&n->t, "device thread: poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents) {
			drain_fd(n->ctl_fd);
			if (!net_control(n))
				break;
			continue;	/* paused may have changed: recompute the set */
		}
		if (paused)
			continue;
		if (pfd[2].revents) {
			drain_fd(pfd[2].fd);
			virtio_net_tx(n);
		}
		if (pfd[1].revents)
			drain_fd(pfd[1].fd);
		if (pfd[1].revents || (nfds == 4 && pfd[3].revents))
			virtio_net_rx(n);
	}
	/* A quiescer must not wait for a thread that is gone. */
	pthread_mutex_lock(&n->lock);
	n->quiesce_done = UINT64_MAX;
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

int virtio_net_start(struct virtio_net *n, char *err, size_t errlen)
{
	int rc;

	n->ctl_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (n->ctl_fd < 0)
		return kvmlu_err(err, errlen, -errno, "%s: eventfd: %s", n->name, strerror(errno));
	rc = pthread_create(&n->thread, NULL, net_thread, n);
	if (rc)
		return kvmlu_err(err, errlen, -rc, "%s: device thread: %s", n->name, strerror(rc));
	n->thread_started = true;
	return 0;
}

void virtio_net_quiesce(struct virtio_net *n)
{
	uint64_t req;

	if (!n->thread_started) {
		virtio_net_tx(n);
		return;
	}
	pthread_mutex_lock(&n->lock);
	req = ++n->quiesce_req;
	pthread_mutex_unlock(&n->lock);
	wake(n->ctl_fd);
	pthread_mutex_lock(&n->lock);
	while (n->quiesce_done < req)
		pthread_cond_wait(&n->cond, &n->lock);
	pthread_mutex_unlock(&n->lock);
}

void virtio_net_resume(struct virtio_net *n)
{
	if (!n->thread_started)
		return;
	pthread_mutex_lock(&n->lock);
	n->resume_req = n->quiesce_req;
	pthread_mutex_unlock(&n->lock);
	wake(n->ctl_fd);
	/* Whatever the guest queued while paused is looked at now. */
	wake(n->t.kick_fd[VIRTIO_NET_RXQ]);
	wake(n->t.kick_fd[VIRTIO_NET_TXQ]);
}

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
 * Quiesce (vCPUs already parked, so no chain appears; the handshake is
 * device_thread.c's): the thread sends
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
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "vmm/devices/virtio_net.h"

/* device_thread_control()'s drain: the transmit ring emptied for good (vCPUs parked). */
static void net_drain(void *arg)
{
	virtio_net_tx(arg);
}

static void *net_thread(void *arg)
{
	struct virtio_net *n = arg;
	char tname[16];

	/*
	 * Transmit frames were sent and the next kick not asked for yet: the
	 * ring is looked at again by tx_look_ns, whatever else wakes the thread.
	 */
	bool tx_watch = false;
	uint64_t tx_look_ns = 0;

	snprintf(tname, sizeof(tname), "net-%.11s", n->spec.tap);
	pthread_setname_np(pthread_self(), tname);
	for (;;) {
		struct timespec poll_for = { 0 };
		struct pollfd pfd[4] = {
			{ .fd = n->io.ctl_fd, .events = POLLIN },
			{ .fd = n->t.kick_fd[VIRTIO_NET_RXQ], .events = POLLIN },
			{ .fd = n->t.kick_fd[VIRTIO_NET_TXQ], .events = POLLIN },
			{ .fd = n->fd, .events = POLLIN },
		};
		bool paused = device_thread_paused(&n->io);
		unsigned int nfds;
		int rc;

		/*
		 * Paused: only ctl. Running: the tap only when there is somewhere
		 * to put a frame, and no frame is held for want of chains (the
		 * receive kick brings those).
		 */
		nfds = paused ? 1 :
		       !n->tap_failed && !n->held_len &&
		       virtio_mmio_pending_arm(&n->t, VIRTIO_NET_RXQ) ? 4 : 3;
		if (tx_watch && !paused) {
			uint64_t now = kvmlu_mono_ns();

			if (now >= tx_look_ns) {
				/* The look after a send: more queued meanwhile, or ask for the next kick. */
				tx_watch = virtio_net_tx_look(n);
				tx_look_ns = now + VIRTIO_NET_TX_POLL_US * 1000ULL;
				continue;
			}
			poll_for.tv_nsec = (long)(tx_look_ns - now);
		}
		rc = ppoll(pfd, nfds, tx_watch && !paused ? &poll_for : NULL, NULL);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			virtio_mmio_device_error(&n->t, "device thread: poll: %s", strerror(errno));
			break;
		}
		if (rc == 0)
			continue;	/* the look is due */
		if (pfd[0].revents) {
			if (!device_thread_control(&n->io, net_drain, n))
				break;
			tx_watch = false;	/* the drain asked for the next kick */
			continue;	/* paused may have changed: recompute the set */
		}
		if (paused)
			continue;
		if (pfd[2].revents) {
			device_thread_drain_fd(pfd[2].fd);
			/* While watching, the look comes on time whatever this finds. */
			if (tx_watch)
				virtio_net_tx_unarmed(n);
			else if ((tx_watch = virtio_net_tx_kick(n)))
				tx_look_ns = kvmlu_mono_ns() + VIRTIO_NET_TX_POLL_US * 1000ULL;
		}
		if (pfd[1].revents)
			device_thread_drain_fd(pfd[1].fd);
		if (pfd[1].revents || (nfds == 4 && pfd[3].revents))
			virtio_net_rx(n);
	}
	device_thread_exit(&n->io);
	return NULL;
}

int virtio_net_start(struct virtio_net *n, char *err, size_t errlen)
{
	return device_thread_start(&n->io, n->name, net_thread, n, err, errlen);
}

void virtio_net_quiesce(struct virtio_net *n)
{
	if (!device_thread_quiesce(&n->io))
		virtio_net_tx(n);
}

void virtio_net_resume(struct virtio_net *n)
{
	if (!n->io.started)
		return;
	device_thread_resume(&n->io);
	/* Whatever the guest queued while paused is looked at now. */
	device_thread_wake(n->t.kick_fd[VIRTIO_NET_RXQ]);
	device_thread_wake(n->t.kick_fd[VIRTIO_NET_TXQ]);
}

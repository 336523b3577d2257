/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The thread of one device and its handshake with the VM: start, stop,
 * quiesce and resume, written once for every device that has a thread
 * (virtio-blk's I/O thread, virtio-net's device thread).
 *
 * The device's thread sleeps in poll() on its own fds and on ctl_fd,
 * and calls device_thread_control() whenever ctl_fd is readable; that
 * runs the device's drain (in the device thread) when a quiesce is
 * asked, acknowledges it, and says whether the thread must end. The
 * quiescer (the VM's pause, vCPUs parked, so no new request appears)
 * waits for the acknowledgement; from then until device_thread_resume()
 * the thread is paused (device_thread_paused()), and a device that must
 * move nothing while paused (virtio-net) polls only ctl_fd then.
 *
 * Unhappy paths: a thread that ends on its own (a poll failure) calls
 * device_thread_exit(), so a quiescer never waits for a thread that is
 * gone. A device whose thread never started is quiesced by the caller
 * (device_thread_quiesce() returns false), in the caller's thread.
 */
#ifndef KVMLU_VMM_DEVICES_DEVICE_THREAD_H
#define KVMLU_VMM_DEVICES_DEVICE_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct device_thread {
	pthread_t thread;
	bool started;
	int ctl_fd;		/* eventfd: stop, quiesce or resume requested */
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a quiesce acknowledged */
	bool stop;
	bool paused;		/* quiesced and not yet resumed */
	uint64_t quiesce_req, quiesce_done, resume_req;
};

/* Before anything else (ctl_fd -1): device_thread_fini() is safe after it. */
void device_thread_init(struct device_thread *t);

/* The ctl eventfd and the thread running fn(arg); name is for messages. */
int device_thread_start(struct device_thread *t, const char *name, void *(*fn)(void *),
			void *arg, char *err, size_t errlen);

/*
 * Device thread, when ctl_fd is readable: a pending quiesce runs
 * drain(arg) and is acknowledged. Returns false when the thread must end.
 */
bool device_thread_control(struct device_thread *t, void (*drain)(void *), void *arg);

/* Device thread: quiesced, and not resumed yet. */
bool device_thread_paused(struct device_thread *t);

/* Device thread, on its way out for whatever reason. */
void device_thread_exit(struct device_thread *t);

/* false: no thread runs, the caller drains itself. */
bool device_thread_quiesce(struct device_thread *t);
void device_thread_resume(struct device_thread *t);

/* Stop and join the thread, if it runs. */
void device_thread_stop(struct device_thread *t);
/* After device_thread_stop(): the eventfd and the lock. */
void device_thread_fini(struct device_thread *t);

/* A write of 1 to an eventfd; a full counter is already a wake-up. */
void device_thread_wake(int fd);
/* Read an eventfd empty (non-blocking: nothing pending is fine). */
void device_thread_drain_fd(int fd);

#endif /* KVMLU_VMM_DEVICES_DEVICE_THREAD_H */

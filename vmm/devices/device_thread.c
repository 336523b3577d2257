// SPDX-License-Identifier: GPL-2.0
/*
 * A device's thread and its quiesce/resume handshake (see
 * device_thread.h). Paused while a quiesce has not been answered by a
 * resume: resume_req is the quiesce_req it answers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/err.h"
#include "vmm/devices/device_thread.h"

void device_thread_wake(int fd)
{
	uint64_t one = 1;

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* full counter: already being woken */
	}
}

void device_thread_drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing pending */
	}
}

void device_thread_init(struct device_thread *t)
{
	memset(t, 0, sizeof(*t));
	t->ctl_fd = -1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
}

int device_thread_start(struct device_thread *t, const char *name, void *(*fn)(void *),
			void *arg, char *err, size_t errlen)
{
	int rc;

	t->ctl_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->ctl_fd < 0)
		return kvmlu_err(err, errlen, -errno, "%s: eventfd: %s", name, strerror(errno));
	rc = pthread_create(&t->thread, NULL, fn, arg);
	if (rc)
		return kvmlu_err(err, errlen, -rc, "%s: device thread: %s", name, strerror(rc));
	t->started = true;
	return 0;
}

bool device_thread_control(struct device_thread *t, void (*drain)(void *), void *arg)
{
	uint64_t req;
	bool quiesce;

	device_thread_drain_fd(t->ctl_fd);
	pthread_mutex_lock(&t->lock);
	if (t->stop) {
		pthread_mutex_unlock(&t->lock);
		return false;
	}
	req = t->quiesce_req;
	quiesce = req > t->quiesce_done;
	pthread_mutex_unlock(&t->lock);
	/* vCPUs are parked: what drain completes stays completed. */
	if (quiesce)
		drain(arg);
	pthread_mutex_lock(&t->lock);
	t->paused = t->resume_req < t->quiesce_req;
	if (quiesce) {
		t->quiesce_done = req;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	return true;
}

bool device_thread_paused(struct device_thread *t)
{
	bool paused;

	pthread_mutex_lock(&t->lock);
	paused = t->paused;
	pthread_mutex_unlock(&t->lock);
	return paused;
}

void device_thread_exit(struct device_thread *t)
{
	pthread_mutex_lock(&t->lock);
	t->quiesce_done = UINT64_MAX;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

bool device_thread_quiesce(struct device_thread *t)
{
	uint64_t req;

	if (!t->started)
		return false;
	pthread_mutex_lock(&t->lock);
	req = ++t->quiesce_req;
	pthread_mutex_unlock(&t->lock);
	device_thread_wake(t->ctl_fd);
	pthread_mutex_lock(&t->lock);
	while (t->quiesce_done < req)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return true;
}

void device_thread_resume(struct device_thread *t)
{
	if (!t->started)
		return;
	pthread_mutex_lock(&t->lock);
	t->resume_req = t->quiesce_req;
	pthread_mutex_unlock(&t->lock);
	device_thread_wake(t->ctl_fd);
}

void device_thread_stop(struct device_thread *t)
{
	if (!t->started)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_mutex_unlock(&t->lock);
	device_thread_wake(t->ctl_fd);
	pthread_join(t->thread, NULL);
	t->started = false;
}

void device_thread_fini(struct device_thread *t)
{
	if (t->ctl_fd >= 0)
		close(t->ctl_fd);
	t->ctl_fd = -1;
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
}

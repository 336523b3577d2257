// SPDX-License-Identifier: GPL-2.0
/* The RAM the agent holds, by domain UUID (see lvram_store.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/libvirt/lvram_peer.h"
#include "agent/libvirt/lvram_store.h"
#include "common/clock.h"
#include "common/err.h"

struct held {
	bool used;
	char uuid[LVRAM_UUID_LEN + 1];
	int fd;
	struct lvram_held_info info;
	bool incoming_done;
	int incoming_rc;
	char incoming_why[256];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct held table[LVRAM_STORE_MAX];

static struct held *find(const char *uuid)
{
	for (unsigned int i = 0; i < LVRAM_STORE_MAX; i++)
		if (table[i].used && !strcmp(table[i].uuid, uuid))
			return &table[i];
	return NULL;
}

int lvram_store_hold(const char *uuid, int fd, uint64_t size, uid_t uid, const char *sum)
{
	struct held *h = NULL;

	if (!lvram_uuid_valid(uuid) || strlen(sum) != LVRAM_SUM_LEN) {
		close(fd);
		return -EINVAL;
	}
	pthread_mutex_lock(&lock);
	if (find(uuid)) {
		pthread_mutex_unlock(&lock);
		close(fd);
		return -EEXIST;
	}
	for (unsigned int i = 0; i < LVRAM_STORE_MAX && !h; i++)
		if (!table[i].used)
			h = &table[i];
	if (h) {
		memset(h, 0, sizeof(*h));
		h->used = true;
		memcpy(h->uuid, uuid, sizeof(h->uuid));
		h->fd = fd;
		h->info.size = size;
		h->info.uid = uid;
		memcpy(h->info.sum, sum, sizeof(h->info.sum));
	}
	pthread_mutex_unlock(&lock);
	if (!h)
		close(fd);
	return h ? 0 : -ENOSPC;
}

int lvram_store_give(const struct lvram_request *rq, uid_t peer_uid, pid_t peer_pid,
		     const char *cmdline, size_t len, int *fd, char *err, size_t errlen)
{
	struct held *h;
	int rc, f;

	pthread_mutex_lock(&lock);
	h = find(rq->uuid);
	if (!h) {
		rc = kvmlu_err(err, errlen, -ENOENT, "no RAM held for %s", rq->uuid);
		goto out;
	}
	rc = lvram_peer_check(peer_uid, h->info.uid, rq->uuid, cmdline, len, err, errlen);
	if (rc)
		goto out;
	if (rq->size != h->info.size) {
		rc = kvmlu_err(err, errlen, -EINVAL, "pc.ram of %llu bytes asked, %llu held",
			       (unsigned long long)rq->size, (unsigned long long)h->info.size);
		goto out;
	}
	if (!h->info.expected) {
		rc = kvmlu_err(err, errlen, -EAGAIN,
			       "the RAM of %s is held for kvmlu domain-replace-qemu: start the domain "
			       "with that command, not by itself", rq->uuid);
		goto out;
	}
	if (h->info.given) {
		rc = kvmlu_err(err, errlen, -EBUSY, "the RAM of %s was given to pid %d already",
			       rq->uuid, (int)h->info.given_pid);
		goto out;
	}
	f = fcntl(h->fd, F_DUPFD_CLOEXEC, 3);
	if (f < 0) {
		rc = kvmlu_err(err, errlen, -errno, "dup: %s", strerror(errno));
		goto out;
	}
	h->info.given = true;
	h->info.given_pid = peer_pid;
	h->info.sum_given[0] = '\0';
	if (h->info.verified) {
		/* Hashed equal to sum, and nothing but the agent has had it since. */
		memcpy(h->info.sum_given, h->info.sum, sizeof(h->info.sum_given));
		h->info.verified = false;
	}
	h->incoming_done = false;
	*fd = f;
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

void lvram_store_ungive(const char *uuid)
{
	struct held *h;

	pthread_mutex_lock(&lock);
	h = find(uuid);
	if (h) {
		h->info.given = false;
		h->info.given_pid = 0;
		h->info.sum_given[0] = '\0';
		h->incoming_done = false;
	}
	pthread_mutex_unlock(&lock);
}

void lvram_store_expect(const char *uuid, bool expect)
{
	struct held *h;

	pthread_mutex_lock(&lock);
	h = find(uuid);
	if (h)
		h->info.expected = expect;
	pthread_mutex_unlock(&lock);
}

void lvram_store_set_verified(const char *uuid)
{
	struct held *h;

	pthread_mutex_lock(&lock);
	h = find(uuid);
	if (h && !h->info.given)
		h->info.verified = true;
	pthread_mutex_unlock(&lock);
}

void lvram_store_set_sum_given(const char *uuid, pid_t pid, const char *sum)
{
	struct held *h;

	if (strlen(sum) != LVRAM_SUM_LEN)
		return;
	pthread_mutex_lock(&lock);
	h = find(uuid);
	if (h && h->info.given && h->info.given_pid == pid)
		memcpy(h->info.sum_given, sum, sizeof(h->info.sum_given));
	pthread_mutex_unlock(&lock);
}

void lvram_store_set_incoming(const char *uuid, pid_t pid, int rc, const char *why)
{
	struct held *h;

	pthread_mutex_lock(&lock);
	h = find(uuid);
	if (h && h->info.given && h->info.given_pid == pid) {
		h->incoming_done = true;
		h->incoming_rc = rc;
		snprintf(h->incoming_why, sizeof(h->incoming_why), "%s", why);
		pthread_cond_broadcast(&changed);
	}
	pthread_mutex_unlock(&lock);
}

int lvram_store_wait_incoming(const char *uuid, int timeout_ms, char *why, size_t whylen)
{
	struct timespec until;
	struct held *h;
	int rc = 0;

	kvmlu_deadline_ms(&until, CLOCK_REALTIME, timeout_ms > 0 ? (unsigned int)timeout_ms : 0);
	pthread_mutex_lock(&lock);
	while ((h = find(uuid)) && !h->incoming_done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&changed, &lock, &until);
	if (!h)
		rc = kvmlu_err(why, whylen, -ENOENT, "no RAM held");
	else if (!h->incoming_done)
		rc = kvmlu_err(why, whylen, -ETIMEDOUT,
			       "the new QEMU did not ask for its RAM in %d ms", timeout_ms);
	else
		rc = kvmlu_err(why, whylen, h->incoming_rc, "%s", h->incoming_why);
	pthread_mutex_unlock(&lock);
	return rc;
}

int lvram_store_get(const char *uuid, int *fd, struct lvram_held_info *info)
{
	struct held *h;
	int rc = -ENOENT;

	pthread_mutex_lock(&lock);
	h = find(uuid);
	if (h) {
		*fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 3);
		rc = *fd < 0 ? -errno : 0;
		if (info)
			*info = h->info;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

bool lvram_store_held(const char *uuid)
{
	bool r;

	pthread_mutex_lock(&lock);
	r = find(uuid) != NULL;
	pthread_mutex_unlock(&lock);
	return r;
}

void lvram_store_release(const char *uuid)
{
	struct held *h;

	pthread_mutex_lock(&lock);
	h = find(uuid);
	if (h) {
		close(h->fd);
		memset(h, 0, sizeof(*h));
		pthread_cond_broadcast(&changed);
	}
	pthread_mutex_unlock(&lock);
}

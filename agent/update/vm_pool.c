// SPDX-License-Identifier: GPL-2.0
/*
 * The bounded thread set of vm_pool.h: a thread per item, at most width
 * alive, and a queue of finished items the caller's thread drains. The
 * item's slot is written by its thread before it is queued and read by
 * the caller after pthread_join, so no other locking is needed for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "agent/update/vm_pool.h"

struct vm_pool;

struct vm_pool_slot {
	struct vm_pool *pool;
	pthread_t thread;
	unsigned int i;
	int ret;
};

struct vm_pool {
	const struct vm_pool_ops *ops;
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t finished;
	unsigned int *queue;		/* finished items, in finishing order */
	unsigned int head, tail;	/* guarded by lock */
	struct vm_pool_slot *slots;
};

static void *vm_pool_thread(void *p)
{
	struct vm_pool_slot *s = p;
	struct vm_pool *pool = s->pool;

	s->ret = pool->ops->work(pool->arg, s->i);
	pthread_mutex_lock(&pool->lock);
	pool->queue[pool->tail++] = s->i;
	pthread_cond_signal(&pool->finished);
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

static unsigned int vm_pool_wait_one(struct vm_pool *pool)
{
	unsigned int i;

	pthread_mutex_lock(&pool->lock);
	while (pool->head == pool->tail)
		pthread_cond_wait(&pool->finished, &pool->lock);
	i = pool->queue[pool->head++];
	pthread_mutex_unlock(&pool->lock);
	pthread_join(pool->slots[i].thread, NULL);
	return i;
}

int vm_pool_run(const struct vm_pool_ops *ops, void *arg, unsigned int n,
		unsigned int width)
{
	struct vm_pool pool = { .ops = ops, .arg = arg };
	unsigned int next = 0, running = 0;
	int first = 0;

	if (!n)
		return 0;
	if (!width)
		width = 1;
	pool.queue = calloc(n, sizeof(*pool.queue));
	pool.slots = calloc(n, sizeof(*pool.slots));
	if (!pool.queue || !pool.slots) {
		first = -ENOMEM;
		goto out_free;
	}
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.finished, NULL);
	for (;;) {
		while (!first && next < n && running < width) {
			struct vm_pool_slot *s = &pool.slots[next];
			int err;

			s->pool = &pool;
			s->i = next++;
			ops->start(arg, s->i);
			err = pthread_create(&s->thread, NULL, vm_pool_thread, s);
			if (err) {
				first = -err;
				ops->done(arg, s->i, -err);
				break;
			}
			running++;
		}
		if (!running)
			break;
		{
			unsigned int i = vm_pool_wait_one(&pool);
			int ret = pool.slots[i].ret;

			running--;
			ops->done(arg, i, ret);
			if (ret < 0 && !first)
				first = ret;
		}
	}
	pthread_cond_destroy(&pool.finished);
	pthread_mutex_destroy(&pool.lock);
out_free:
	free(pool.slots);
	free(pool.queue);
	return first;
}

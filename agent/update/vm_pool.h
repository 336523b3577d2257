/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bounded set of threads for one step over many VMs (prepare-update of
 * every VM at once, so the first VMs do not wait paused for the last).
 *
 * Lifecycle of vm_pool_run(): on the caller's thread, start(i) for the
 * next item, then a thread runs work(i); at most `width` run at a time.
 * As each finishes, in the order they finish, done(i, ret) runs on the
 * caller's thread again, so all bookkeeping (journal, events) stays on
 * one thread and work() touches only what start() handed it. After the
 * first item that fails (ret < 0, or no thread could be made) no new item
 * is started; those already running are waited for. Returns when none
 * runs; items never started got neither start() nor done().
 */
#ifndef KVMLU_VM_POOL_H
#define KVMLU_VM_POOL_H

struct vm_pool_ops {
	void (*start)(void *arg, unsigned int i);	/* caller's thread */
	int (*work)(void *arg, unsigned int i);		/* a pool thread */
	void (*done)(void *arg, unsigned int i, int ret);	/* caller's thread */
};

/* 0, or the first failure's -errno (-ENOMEM: nothing was started). */
int vm_pool_run(const struct vm_pool_ops *ops, void *arg, unsigned int n,
		unsigned int width);

#endif /* KVMLU_VM_POOL_H */

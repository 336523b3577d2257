/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accept4() that still answers a client when the process is out of file
 * descriptors. Out of fds, accept4() fails with EMFILE and leaves the
 * connection in the backlog: a poll loop wakes again at once and spins,
 * a blocking loop retries at once and spins, and the client waits with
 * no answer. A spare descriptor, held for this moment only, is given up:
 * the connection is accepted on it, the caller tells the client why
 * (Busy) and closes it, and the spare is taken back.
 */
#ifndef KVMLU_COMMON_ACCEPT_SPARE_H
#define KVMLU_COMMON_ACCEPT_SPARE_H

#include <stdbool.h>

struct accept_spare {
	int fd;			/* /dev/null, or -1 while lent out or lost */
};

/* 0, or -errno if the spare cannot be opened. */
int accept_spare_init(struct accept_spare *sp);
void accept_spare_fini(struct accept_spare *sp);

/*
 * accept4(lfd, flags). A connection accepted only thanks to the spare
 * sets *out_of_fds: answer it Busy, close it, then accept_spare_refill().
 * -errno as accept4() otherwise; -EMFILE or -ENFILE means the spare could
 * not help (no client was waiting yet, or another thread took the freed
 * slot): the caller backs off before it tries again. Never blocks on a
 * blocking listener while the spare is lent out.
 */
int accept_spare_accept(struct accept_spare *sp, int lfd, int flags, bool *out_of_fds);

/* Take the spare back after the out-of-fds connection is closed. */
void accept_spare_refill(struct accept_spare *sp);

/* The message a client refused for want of descriptors gets. */
#define ACCEPT_SPARE_BUSY_MSG "server out of file descriptors: try again later"

#endif /* KVMLU_COMMON_ACCEPT_SPARE_H */

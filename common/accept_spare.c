// SPDX-License-Identifier: GPL-2.0
/* Accepting while out of file descriptors (see accept_spare.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/accept_spare.h"

int accept_spare_init(struct accept_spare *sp)
{
	sp->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return sp->fd < 0 ? -errno : 0;
}

void accept_spare_fini(struct accept_spare *sp)
{
	if (sp->fd >= 0)
		close(sp->fd);
	sp->fd = -1;
}

void accept_spare_refill(struct accept_spare *sp)
{
	if (sp->fd < 0)
		sp->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

int accept_spare_accept(struct accept_spare *sp, int lfd, int flags, bool *out_of_fds)
{
	int fd, e, fl;

	*out_of_fds = false;
	accept_spare_refill(sp);	/* lost to another thread last time */
	fd = accept4(lfd, NULL, NULL, flags);
	if (fd >= 0)
		return fd;
	e = errno;
	if ((e != EMFILE && e != ENFILE) || sp->fd < 0)
		return -e;
	/*
	 * Out of fds, accept4() fails before it looks for a client, so one
	 * may or may not be waiting. Take only one already there: on a
	 * blocking listener accept4() would otherwise hold the spare until
	 * the next client comes, and refuse that one whatever the limit is
	 * by then.
	 */
	fl = fcntl(lfd, F_GETFL);
	if (fl < 0 || (!(fl & O_NONBLOCK) && fcntl(lfd, F_SETFL, fl | O_NONBLOCK) < 0))
		return -e;
	close(sp->fd);
	sp->fd = -1;
	fd = accept4(lfd, NULL, NULL, flags);
	if (fd < 0 && errno != EAGAIN)
		e = errno;
	if (!(fl & O_NONBLOCK))
		fcntl(lfd, F_SETFL, fl);
	if (fd < 0) {
		accept_spare_refill(sp);
		return -e;
	}
	*out_of_fds = true;
	return fd;
}

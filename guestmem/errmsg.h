/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error text for libguestmem callers. Every public function takes an
 * optional (err, errlen) buffer; this is the one place that fills it, so a
 * NULL buffer is always fine and the text is always terminated. Internal to
 * guestmem/: not installed with guestmem.h.
 */
#ifndef KVMLU_GUESTMEM_ERRMSG_H
#define KVMLU_GUESTMEM_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

__attribute__((format(printf, 3, 4)))
static inline void guestmem_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

#endif /* KVMLU_GUESTMEM_ERRMSG_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error text for the caller. Functions return 0 or -errno and, when they
 * fail, write one line saying what failed and with which value into a
 * caller-supplied buffer; only main() or a socket reply shows it.
 */
#ifndef KVMLU_COMMON_ERR_H
#define KVMLU_COMMON_ERR_H

#include <stddef.h>

/* Formats into err (if non-NULL and errlen > 0) and returns ret, for `return kvmlu_err(...)`. */
int kvmlu_err(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* KVMLU_COMMON_ERR_H */

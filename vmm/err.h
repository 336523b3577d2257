/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error text for the caller. vmm/ functions return 0 or -errno and, when
 * they fail, write one line saying what failed and with which value into
 * a caller-supplied buffer; only main() or a control-socket reply shows
 * it. No lifecycle: a plain formatting helper used by every vmm/ file.
 */
#ifndef KVMLU_VMM_ERR_H
#define KVMLU_VMM_ERR_H

#include <stddef.h>

/* Formats into err (if non-NULL) and returns ret, so `return vmm_err(...)`. */
int vmm_err(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* KVMLU_VMM_ERR_H */

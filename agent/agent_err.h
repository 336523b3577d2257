/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error text for the agent and the CLI. Functions in agent/ return 0 or
 * -errno and, when they fail, write one line saying what failed and with
 * which value into a caller-supplied buffer; the socket reply, the report
 * or main() shows it. No lifecycle: a formatting helper.
 */
#ifndef KVMLU_AGENT_ERR_H
#define KVMLU_AGENT_ERR_H

#include <stddef.h>

/* Formats into err (if non-NULL) and returns ret, so `return agent_err(...)`. */
int agent_err(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* KVMLU_AGENT_ERR_H */

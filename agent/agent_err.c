// SPDX-License-Identifier: GPL-2.0
/* Error text formatting for agent/ (see agent_err.h). */
#include <stdarg.h>
#include <stdio.h>

#include "agent/agent_err.h"

int agent_err(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/* Checks on a path's spelling (see path_name.h). */
#include <string.h>

#include "common/path_name.h"

bool path_has_dot_component(const char *p)
{
	while (*p) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return true;
		p += n;
	}
	return false;
}

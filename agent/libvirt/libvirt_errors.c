// SPDX-License-Identifier: GPL-2.0
/* libvirt's errors as the agent reports them (see libvirt_errors.h). */
#include <stddef.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "agent/libvirt/libvirt_errors.h"

static void ignore_error(void *arg, virErrorPtr e)
{
	(void)arg;
	(void)e;
}

void libvirt_errors_quiet(void)
{
	virSetErrorFunc(NULL, ignore_error);
}

const char *libvirt_last_error(void)
{
	const char *m = virGetLastErrorMessage();

	return m ? m : "unknown libvirt error";
}

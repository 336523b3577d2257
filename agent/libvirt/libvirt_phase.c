// SPDX-License-Identifier: GPL-2.0
#include "agent/libvirt/libvirt_phase.h"

#include <inttypes.h>
#include <stdio.h>

#include "common/clock.h"

void libvirt_phase_log(const char *name, const char *what)
{
	fprintf(stderr, "kvmlu-agent: %s: phase %s wall_ns=%" PRIu64 "\n", name, what,
		kvmlu_wall_ns());
}

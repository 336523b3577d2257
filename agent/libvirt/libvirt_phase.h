/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One stderr line per step of a libvirt domain's blackout (suspend, save,
 * hash, start, resume), with this kernel's CLOCK_REALTIME: the agent's log
 * then says where a domain's downtime went, and tests/bench/bench_libvirt_ram.sh
 * puts the steps of both kernels on one clock.
 */
#ifndef KVMLU_AGENT_LIBVIRT_PHASE_H
#define KVMLU_AGENT_LIBVIRT_PHASE_H

/* "kvmlu-agent: <name>: phase <what> wall_ns=<CLOCK_REALTIME>" */
void libvirt_phase_log(const char *name, const char *what);

#endif

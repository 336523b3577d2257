/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Preflight of a host update: the facts about the host and every VM, and
 * the judgement on them. Gathering (host_facts.c, the VMM status calls)
 * is separate from judging (preflight_evaluate, a pure function), so the
 * rules are tested without a host that has LUO.
 *
 * Everything here runs before any VM is paused: a refusal changes nothing.
 */
#ifndef KVMLU_PREFLIGHT_H
#define KVMLU_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config/agent_config.h"
#include "agent/journal/journal.h"

struct host_facts {
	bool liveupdate_dev;	/* /dev/liveupdate exists */
	bool kho_enabled;	/* KHO active in this kernel */
	char kho_why[128];	/* how kho_enabled was found out */
	uint64_t scratch_bytes;	/* sum of kho/out/scratch_len; 0 unknown */
	uint64_t mem_total;	/* /proc/meminfo MemTotal */
	uint64_t mem_available;	/* /proc/meminfo MemAvailable */
	uint64_t kernel_bytes;	/* size of the new kernel image */
	uint64_t initrd_bytes;
};

struct vm_facts {
	bool answered;		/* the VMM replied to status */
	bool preservable;	/* it says its memory can go into LUO */
	uint64_t memory_bytes;
	/*
	 * Bytes of that RAM in host memory now (status "memory_resident").
	 * Preserving allocates the rest, holes included (mm/memfd_luo.c), so
	 * preflight counts memory_bytes - memory_resident against free memory;
	 * all of memory_bytes when the VMM does not say (resident_known false).
	 */
	bool resident_known;
	uint64_t memory_resident;
	char backend[24];	/* "memfd", "guest_memfd", ... */
	char folio[8];		/* status "memory_folio": "2M", "4K"; "" unsaid */
	char state[24];		/* "running", "paused", ... */
	char why[JOURNAL_TEXT_MAX];	/* why not answered / not preservable */
	/* Why a disk could not be found again after the kexec (vm_disks.h); "" if fine. */
	char disk_why[JOURNAL_TEXT_MAX];
	/* Its VMM speaks another control protocol (vmm_client.h); "" if the same. */
	char protocol_why[JOURNAL_TEXT_MAX];
};

/* What preflight estimates the next kernel needs from KHO scratch memory. */
uint64_t preflight_scratch_estimate(const struct host_facts *h, uint64_t preserved);

/* True if the command line has name=on (or =1/y/yes/true) as a token. */
bool preflight_cmdline_has(const char *cmdline, const char *name);

/*
 * Judge the facts for the update in j (its VMs in j->vms, vf[i] for
 * vms[i]). Returns 0, or -EPERM with every reason in err ("; "
 * separated). Warnings (scratch close to the estimate, paused VMs) go
 * into j's notes either way.
 */
int preflight_evaluate(const struct host_facts *h, const struct vm_facts *vf,
		       struct journal *j, const struct agent_config *c,
		       char *err, size_t errlen);

#endif /* KVMLU_PREFLIGHT_H */

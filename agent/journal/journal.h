/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The journal of one host update: which VMs, their LUO sessions and
 * memory checksums, the phases with their times, the outcome. It is also
 * the report: `kvmlu report` shows finished journals from the history.
 *
 * Lifecycle: created at host-update with every VM "listed"; saved to
 * state_dir after every change (so an agent killed mid-prepare finds the
 * VMs it paused); before the kexec serialized into a memfd in the agent's
 * LUO session; after the kexec retrieved by `kvmlu-agent --restore`,
 * completed with restore times, and written to the history.
 *
 * The serialized form (journal_json.h) is a JSON envelope {"kvmlu-journal":1,"xxh64":H,
 * "body":"<JSON text>"} where H is XXH64 of the body text: a journal that
 * was cut short or changed is refused, never half-used.
 * "libvirt_domains" (libvirt_domain_reports_to_json) may be absent: journals
 * from before it existed still read, with no domains.
 * Times are CLOCK_REALTIME nanoseconds, the only clock that means the same
 * thing on both sides of a kexec.
 */
#ifndef KVMLU_JOURNAL_H
#define KVMLU_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/journal/domain_report.h"
#include "agent/journal/update_phase.h"

#define JOURNAL_VERSION		1
#define JOURNAL_MAX_VMS		64
#define JOURNAL_MAX_NOTES	8
#define JOURNAL_NAME_MAX	64	/* VM names and LUO session names */
#define JOURNAL_TEXT_MAX	256
#define JOURNAL_CHECKSUM_LEN	32	/* hex digits of an XXH128 */
#define JOURNAL_MAX_BYTES	(1 << 20)
/*
 * Paths (kernel, initrd) and socket paths (a VM's control socket): the
 * journal's own sizes, so that what crosses the kexec does not change
 * with the agent's configuration. Socket paths fit a sun_path.
 */
#define JOURNAL_PATH_MAX	256
#define JOURNAL_SOCK_PATH_MAX	108
/* Not a VM: the name of the agent's own LUO session (journal_store.h). */
#define JOURNAL_RESERVED_VM	"kvmlu-agent-journal"

enum journal_vm_state {
	JOURNAL_VM_LISTED,	/* known, untouched */
	JOURNAL_VM_PREPARING,	/* prepare-update sent: may be paused */
	JOURNAL_VM_PREPARED,	/* paused, session ready */
	JOURNAL_VM_ABORTED,	/* abort-update done: running again */
	JOURNAL_VM_RESTORED,	/* after kexec: restore started and answers */
	JOURNAL_VM_VERIFIED,	/* running, checksum equal to before */
	JOURNAL_VM_FAILED,	/* see error */
	/*
	 * After kexec: not running, but not lost either. A kvmlu-vmm holds it
	 * paused (its session taken, reachable on its control socket, waiting
	 * for resume), or the session is still in the kernel untaken. error
	 * says why and what to do.
	 */
	JOURNAL_VM_HELD,
	/*
	 * Its VMM died holding it: killed during prepare-update (the kernel
	 * closed its session), or its restore exited after the kexec. The VM
	 * is gone; error says how.
	 */
	JOURNAL_VM_LOST,
	/*
	 * After kexec: the session the journal names is not in this kernel
	 * (kvmlu-vmm restore found none of that name). Nothing was restored
	 * and nothing started in its place; why it is not there (its VMM
	 * gone before the kexec, a kernel that did not keep it) is not known
	 * here, so none is claimed. error names the session.
	 */
	JOURNAL_VM_MISSING,
	/*
	 * After kexec, from the kexec marker only: the journal that vouches
	 * for the VM's session did not come through, so the agent restored
	 * nothing and did not look (LUO cannot list sessions without taking
	 * them). Its session, if the kernel kept it, stays held until it is
	 * retrieved or the next reboot; error says how to bring it back.
	 */
	JOURNAL_VM_UNRESTORED,
	JOURNAL_VM_NR_STATES,
};

/*
 * The steps of the VMM's prepare_ns and restore_ns, as its replies gave
 * them; 0 unknown (a VMM that does not send one, an older journal).
 */
struct journal_vm_steps {
	int64_t prepare_paused_ns;	/* prepare-update's part with the vCPUs paused */
	int64_t capture_ns;		/* of it: the state, with the checksum's last round */
	int64_t preserve_ram_ns;	/* the RAM files preserved, before the pause */
	int64_t retrieve_ns;		/* after the kexec: the RAM files retrieved */
	int64_t vm_create_ns;		/* the VM built on them */
	int64_t verify_start_ns;	/* verification started (lazy: userfaultfd armed) */
	int64_t state_restore_ns;	/* TSC, vCPU and device state restored */
};

struct journal_vm {
	char name[JOURNAL_NAME_MAX];
	char control[JOURNAL_SOCK_PATH_MAX];	/* VMM control socket */
	char session[JOURNAL_NAME_MAX];	/* "kvmlu/vm/<name>" once prepared */
	char checksum[JOURNAL_CHECKSUM_LEN + 1];	/* at pause */
	char checksum_after[JOURNAL_CHECKSUM_LEN + 1];	/* after restore */
	enum journal_vm_state state;
	uint64_t memory_bytes;
	int64_t paused_ns;	/* prepare-update sent */
	int64_t prepared_ns;	/* prepare-update answered */
	int64_t resumed_ns;	/* running again (abort or restore) */
	/*
	 * Every byte of its RAM verified equal to the pause (the VMM's
	 * verified_at_ns): after resumed_ns when verified lazily, before
	 * it when all at once; 0 unknown.
	 */
	int64_t verified_ns;
	int64_t vmm_prepare_ns;	/* the VMM's own prepare-update time, 0 unknown */
	int64_t vmm_restore_ns;	/* the VMM's own restore time, 0 unknown */
	struct journal_vm_steps steps;
	char error[JOURNAL_TEXT_MAX];
};

struct journal_phase_time {
	int64_t start_ns, end_ns;	/* 0: not reached */
	bool failed;
};

struct journal {
	char update_id[48];
	char kernel[JOURNAL_PATH_MAX];
	char initrd[JOURNAL_PATH_MAX];	/* "" for none */
	char cmdline[1024];
	bool dry_run;
	enum update_phase phase;	/* the phase running or last run */
	enum update_outcome outcome;
	char failed_phase[24];		/* "" unless something failed */
	char error[512];		/* what failed, for the report */
	int64_t started_ns, finished_ns;
	struct journal_phase_time phases[UPDATE_NR_PHASES];
	unsigned int nr_notes;		/* preflight warnings and such */
	char notes[JOURNAL_MAX_NOTES][JOURNAL_TEXT_MAX];
	unsigned int nr_vms;
	struct journal_vm vms[JOURNAL_MAX_VMS];
	/* libvirt domains handled by this update (agent/libvirt/libvirt_update.h), beside the VMs. */
	unsigned int nr_domains;
	struct libvirt_domain_report domains[DOMAIN_REPORTS_MAX];
};

const char *journal_vm_state_name(enum journal_vm_state s);

/* A zeroed journal with a fresh update id from the time, pid and a sequence number. */
void journal_init(struct journal *j, int64_t now_ns);

/* Add a VM (state listed); -ENOSPC past JOURNAL_MAX_VMS, -EINVAL bad name. */
int journal_add_vm(struct journal *j, const char *name, const char *control,
		   char *err, size_t errlen);

/* Append a note (truncated past JOURNAL_MAX_NOTES, never an error). */
void journal_note(struct journal *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Replace the journal's libvirt domains with these (at most DOMAIN_REPORTS_MAX). */
void journal_set_domains(struct journal *j, const struct libvirt_domain_report *d,
			 unsigned int nr);

/* Blackout of a VM in ns (pause to resume), -1 if it has not resumed. */
int64_t journal_vm_blackout_ns(const struct journal_vm *vm);
/* From the pause to all RAM verified (lazily: after the resume); -1 unknown. */
int64_t journal_vm_to_verified_ns(const struct journal_vm *vm);

/* -EINVAL for a name that is not a VM state. */
int journal_vm_state_parse(const char *s, enum journal_vm_state *out);

#endif /* KVMLU_JOURNAL_H */

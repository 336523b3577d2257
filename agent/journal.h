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
 * The serialized form is a JSON envelope {"kvmlu-journal":1,"xxh64":H,
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

#include "agent/agent_config.h"
#include "agent/libvirt_domains.h"
#include "agent/update_phase.h"

struct json_object;

#define JOURNAL_VERSION		1
#define JOURNAL_MAX_VMS		64
#define JOURNAL_MAX_NOTES	8
#define JOURNAL_NAME_MAX	64	/* VM names and LUO session names */
#define JOURNAL_TEXT_MAX	256
#define JOURNAL_CHECKSUM_LEN	32	/* hex digits of an XXH128 */
#define JOURNAL_MAX_BYTES	(1 << 20)
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
	JOURNAL_VM_NR_STATES,
};

struct journal_vm {
	char name[JOURNAL_NAME_MAX];
	char control[AGENT_SOCK_PATH_MAX];	/* VMM control socket */
	char session[JOURNAL_NAME_MAX];	/* "kvmlu/vm/<name>" once prepared */
	char checksum[JOURNAL_CHECKSUM_LEN + 1];	/* at pause */
	char checksum_after[JOURNAL_CHECKSUM_LEN + 1];	/* after restore */
	enum journal_vm_state state;
	uint64_t memory_bytes;
	int64_t paused_ns;	/* prepare-update sent */
	int64_t prepared_ns;	/* prepare-update answered */
	int64_t resumed_ns;	/* running again (abort or restore) */
	int64_t vmm_prepare_ns;	/* the VMM's own prepare-update time, 0 unknown */
	int64_t vmm_restore_ns;	/* the VMM's own restore time, 0 unknown */
	char error[JOURNAL_TEXT_MAX];
};

struct journal_phase_time {
	int64_t start_ns, end_ns;	/* 0: not reached */
	bool failed;
};

struct journal {
	char update_id[48];
	char kernel[AGENT_PATH_MAX];
	char initrd[AGENT_PATH_MAX];	/* "" for none */
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
	/* libvirt domains handled by this update (libvirt_update.h), beside the VMs. */
	unsigned int nr_domains;
	struct libvirt_domain_report domains[LIBVIRT_DOMAINS_MAX];
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

/* Replace the journal's libvirt domains with these (at most LIBVIRT_DOMAINS_MAX). */
void journal_set_domains(struct journal *j, const struct libvirt_domain_report *d,
			 unsigned int nr);

/* Blackout of a VM in ns (pause to resume), -1 if it has not resumed. */
int64_t journal_vm_blackout_ns(const struct journal_vm *vm);

/* The journal as a JSON object (a new reference), or NULL on ENOMEM. */
struct json_object *journal_to_json(const struct journal *j);

/* A JSON object back into a journal, every field checked; j untouched on error. */
int journal_from_json(struct json_object *obj, struct journal *j,
		      char *err, size_t errlen);

/* The envelope text (malloc'd, *len without the NUL). */
int journal_serialize(const struct journal *j, char **out, size_t *len);

/* Check the envelope and its XXH64, then the body; j untouched on error. */
int journal_parse(const char *buf, size_t len, struct journal *j,
		  char *err, size_t errlen);

#endif /* KVMLU_JOURNAL_H */

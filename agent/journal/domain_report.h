/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a host update did to one libvirt domain, as the journal keeps it:
 * name, UUID, state, the times of suspend, save and resume, the error.
 * agent/libvirt/libvirt_domains.c fills these while it works; the journal
 * carries them across the kexec and the report shows them. Nothing here
 * needs libvirt: the journal, the report and the CLI use it without
 * linking agent/libvirt/.
 *
 * Lifecycle: a report is written before the kexec (prepare, or rollback),
 * serialized in the journal, and read back by the next kernel's agent,
 * which completes it at restore. Read back, it is untrusted like any file:
 * every field is checked and a bad entry refuses the whole array.
 */
#ifndef KVMLU_DOMAIN_REPORT_H
#define KVMLU_DOMAIN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define DOMAIN_REPORTS_MAX	64	/* domains one update handles */
#define DOMAIN_NAME_MAX		256	/* libvirt domain names, with the NUL */
#define DOMAIN_UUID_LEN		36	/* 8-4-4-4-12 hex digits */

enum libvirt_domain_state {
	LIBVIRT_DOMAIN_LISTED,		/* running, untouched */
	LIBVIRT_DOMAIN_OPTED_OUT,	/* kvmlu:config optout="yes": left alone */
	LIBVIRT_DOMAIN_SUSPENDED,	/* virDomainSuspend done */
	LIBVIRT_DOMAIN_SAVED,		/* managed save written, QEMU gone */
	LIBVIRT_DOMAIN_RESUMED,		/* running again before any kexec */
	LIBVIRT_DOMAIN_RESTORED,	/* started from managed save, verified */
	LIBVIRT_DOMAIN_FAILED,		/* see error */
	LIBVIRT_DOMAIN_NR_STATES,
};

struct libvirt_domain_report {
	char name[DOMAIN_NAME_MAX];
	char uuid[DOMAIN_UUID_LEN + 1];
	enum libvirt_domain_state state;
	bool was_paused;		/* paused before the update: stays paused */
	int64_t suspended_ns;		/* CLOCK_REALTIME, 0: not reached */
	int64_t saved_ns;
	int64_t resumed_ns;
	char error[768];
	/*
	 * What happens to its RAM and why (libvirt_ram_class.h), e.g.
	 * "managed save: RAM to disk: hugepages"; "" not judged (opted out,
	 * or a journal from before).
	 */
	char ram[384];
	/*
	 * RAM kept in place across the kexec (libvirt_ram "in-place" or
	 * "in-place-or-save"; docs/libvirt-ram-in-place.md, section 8):
	 * saved with device state only, its RAM memfd and the image in LUO
	 * session `session`. Unset for a managed save with the RAM.
	 */
	bool in_place;
	char session[64];		/* kvmlu/lv/<uuid> */
	char checksum[33];		/* guestmem checksum of the RAM at the pause */
	char checksum_after[33];	/* after the kexec, before the guest runs */
	uint64_t memory_bytes;		/* pc.ram */
	int64_t image_bytes;		/* the managed-save image's size */
	char image_xxh64[17];		/* its XXH64, hex */
	char image_path[512];		/* where libvirt keeps it */
	uint32_t qemu_uid;		/* the QEMU's uid: only it gets the RAM back */
	uint32_t image_uid, image_gid, image_mode;
};

const char *libvirt_domain_state_name(enum libvirt_domain_state s);

/* 8-4-4-4-12 hex digits, as libvirt writes a domain's <uuid>. */
bool domain_report_uuid_ok(const char *s);

/* suspend → running again, -1 if not both happened. */
int64_t libvirt_domain_downtime_ns(const struct libvirt_domain_report *d);

/*
 * What the update did to d: "ram-in-place", "managed-save", "suspend"
 * (dry run), "left-alone", "none".
 */
const char *libvirt_domain_action(const struct libvirt_domain_report *d);
/*
 * "ok" (running again or left alone), "failed", "pending" (still
 * suspended or saved), "untouched" (listed, never suspended).
 */
const char *libvirt_domain_result(const struct libvirt_domain_report *d);

/*
 * Reports as a JSON array (a new object): name, uuid, state, times, and
 * for the reader action, result, downtime_ns, error (an older journal's
 * downtime_ms, in ms, is still read).
 */
struct json_object *libvirt_domain_reports_to_json(const struct libvirt_domain_report *d,
						   unsigned int nr);
/* Back, every field checked, UUIDs unique; d and *nr unchanged on error. */
int libvirt_domain_reports_from_json(struct json_object *arr, struct libvirt_domain_report *d,
				     unsigned int *nr, char *err, size_t errlen);

#endif /* KVMLU_DOMAIN_REPORT_H */

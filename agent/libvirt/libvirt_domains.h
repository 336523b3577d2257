/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libvirt-managed domains in a host update, through libvirt's C API.
 * A QEMU domain survives a kernel change only with its RAM on disk, so:
 *
 *   prepare   (before the kexec) every running domain that is not opted
 *             out (libvirt_metadata.h) is suspended, then saved with
 *             virDomainManagedSave; its downtime starts at the suspend.
 *             Dry run: suspended and resumed at once, nothing saved.
 *   rollback  (the update stopped before the kexec) saved domains start
 *             again from their managed save, suspended ones resume.
 *   restore   (after the kexec, libvirtd running again) each saved domain,
 *             found by UUID, starts from its managed save (virDomainCreate)
 *             and must be running (or paused, if it was paused before).
 *
 * Before any is touched, prepare writes into each domain's report what
 * happens to its RAM and why it cannot stay in place (libvirt_ram_class.h);
 * with ram_refuse it stops there (-EPERM) if any domain would be saved.
 * With ram_in_place a domain whose RAM can stay in place is not
 * managed-saved with it: lvram_inplace.h keeps its RAM in a LUO session
 * (prepare), runs it again from the held RAM (rollback) or from the
 * session after the kexec (restore).
 *
 * A domain that fails to suspend or save is resumed, prepare rolls back
 * every domain it touched and returns the error: the update must stop
 * before the kexec. The set (names, UUIDs, states, times) goes into the
 * journal as JSON, so the next kernel's agent knows what to restore.
 */
#ifndef KVMLU_LIBVIRT_DOMAINS_H
#define KVMLU_LIBVIRT_DOMAINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/journal/domain_report.h"
#include "agent/libvirt/libvirt_hook_event.h"
#include "common/luo_session.h"

struct json_object;

#define LIBVIRT_DOMAINS_MAX	DOMAIN_REPORTS_MAX
#define LIBVIRT_URI_MAX		256
#define LIBVIRT_DEFAULT_URI	"qemu:///system"

/* A report holds any name and UUID the hook accepts. */
_Static_assert(DOMAIN_NAME_MAX == LIBVIRT_HOOK_NAME_MAX, "domain names");
_Static_assert(DOMAIN_UUID_LEN == LIBVIRT_UUID_LEN, "domain UUIDs");

struct libvirt_domains {
	void *conn;			/* virConnectPtr, NULL when closed */
	char uri[LIBVIRT_URI_MAX];
	/*
	 * libvirt_ram "refuse": prepare judges every domain it would save
	 * (libvirt_ram_class.h) and, if there is one, refuses before
	 * touching any. Set after open (open zeroes s).
	 */
	bool ram_refuse;
	/*
	 * libvirt_ram "in-place" (with ram_refuse) or "in-place-or-save":
	 * a running domain the classifier accepts keeps its RAM in place
	 * (lvram_inplace.h); the others are refused or saved as above. Set
	 * after open, with qmp_dir (kvmlu-qemu's) and save_dir (libvirt's
	 * managed saves).
	 */
	bool ram_in_place;
	char qmp_dir[108];
	char save_dir[256];
	unsigned int nr;
	struct libvirt_domain_report d[LIBVIRT_DOMAINS_MAX];
	bool accepted[LIBVIRT_DOMAINS_MAX];	/* judged: its RAM can stay in place */
	/* An in-place domain's LUO session, open from prepare until the kexec. */
	struct luo_session sess[LIBVIRT_DOMAINS_MAX];
};

/* Connect to uri (NULL: LIBVIRT_DEFAULT_URI). s is zeroed first. */
int libvirt_domains_open(struct libvirt_domains *s, const char *uri, char *err, size_t errlen);
/* Connect again after a daemon restart or a kexec, keeping the reports. */
int libvirt_domains_reconnect(struct libvirt_domains *s, char *err, size_t errlen);
void libvirt_domains_close(struct libvirt_domains *s);

/*
 * List the running domains and write into each report what would happen
 * to its RAM and why; nothing is touched. With ram_refuse: -EPERM naming
 * every domain that would be saved.
 */
int libvirt_domains_judge(struct libvirt_domains *s, char *err, size_t errlen);
int libvirt_domains_prepare(struct libvirt_domains *s, bool dry_run, char *err, size_t errlen);
/* 0 if every touched domain runs again; -EIO (first failure in err) else. */
int libvirt_domains_rollback(struct libvirt_domains *s, char *err, size_t errlen);
/* 0 if every saved domain runs again; -EIO (first failure in err) else. */
int libvirt_domains_restore(struct libvirt_domains *s, char *err, size_t errlen);

/* The reports as a JSON array for the journal and report (a new object). */
struct json_object *libvirt_domains_to_json(const struct libvirt_domains *s);
/* Back from the journal, every field checked; s's reports unchanged on error. */
int libvirt_domains_from_json(struct json_object *arr, struct libvirt_domains *s,
			      char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_DOMAINS_H */

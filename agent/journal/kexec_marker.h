/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kexec marker: history_dir/kexec-pending, written (fsync'd, renamed
 * into place) right before the journal goes into LUO, removed when the
 * update ends: rolled back before the kexec, or restored after it.
 *
 * Why: the journal crosses the kexec only in the agent's LUO session. If
 * that session does not come through (the agent died before reboot(), a
 * kernel that kept nothing), the next kernel's agent would otherwise
 * find no journal and forget the update. The marker is on disk, so it
 * says an update was jumping and which VMs it had; it never vouches for
 * a session (only the journal does): nothing is restored from it.
 *
 * Format, one JSON object, read strictly (every key known, typed, names
 * checked; anything else refuses the whole file):
 *   {"kvmlu-kexec-marker":1,"update_id":"...","started_ns":N,
 *    "marked_ns":N,"kernel":"...","vms":[{"name":"vm1",
 *    "session":"kvmlu/vm/vm1","control":"/run/kvmlu/vms/vm1.sock"},...]}
 * The name does not end in .json: the history lists only reports.
 */
#ifndef KVMLU_KEXEC_MARKER_H
#define KVMLU_KEXEC_MARKER_H

#include <stddef.h>
#include <stdint.h>

#include "agent/journal/journal.h"

#define KEXEC_MARKER_FILE	"kexec-pending"
#define KEXEC_MARKER_VERSION	1
#define KEXEC_MARKER_MAX_BYTES	(64 << 10)

struct kexec_marker_vm {
	char name[JOURNAL_NAME_MAX];
	char session[JOURNAL_NAME_MAX];
	char control[JOURNAL_SOCK_PATH_MAX];
};

struct kexec_marker {
	char update_id[48];
	int64_t started_ns;	/* the update's start */
	int64_t marked_ns;	/* when the marker was written */
	char kernel[JOURNAL_PATH_MAX];
	unsigned int nr_vms;
	struct kexec_marker_vm vms[JOURNAL_MAX_VMS];
};

/* The marker of j: its id, kernel and every VM with a session (prepared). */
void kexec_marker_from_journal(const struct journal *j, int64_t now_ns,
			       struct kexec_marker *m);

/* The JSON text (malloc'd, NUL-terminated, *len without it); -ENOMEM. */
int kexec_marker_serialize(const struct kexec_marker *m, char **out, size_t *len);
/* Strict; m untouched on error (-EINVAL, the reason in err). */
int kexec_marker_parse(const char *buf, size_t len, struct kexec_marker *m,
		       char *err, size_t errlen);

/* dir/kexec-pending, written whole and fsync'd before the rename, then dir fsync'd. */
int kexec_marker_write(const char *dir, const struct kexec_marker *m, char *err, size_t errlen);
/* -ENOENT: none. Other errors (unreadable, too large, not a marker) say why in err. */
int kexec_marker_read(const char *dir, struct kexec_marker *m, char *err, size_t errlen);
/* Gone (and dir fsync'd), or -errno; no marker is not an error. */
int kexec_marker_remove(const char *dir);
/*
 * A marker that does not parse is kept for the operator as
 * dir/kexec-pending.unreadable (the newest one only), so it is reported
 * once and not again at every boot.
 */
int kexec_marker_set_aside(const char *dir);

#endif /* KVMLU_KEXEC_MARKER_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the agent's socket and every VMM's control socket share on the
 * wire (docs/control-protocol.md): one JSON object per line each way,
 *   -> {"cmd":"pause","id":7,"args":{...}}     id and args optional
 *   <- {"ok":true,"return":{...},"id":7}
 *   <- {"ok":false,"error":{"class":"...","desc":"..."},"id":7}
 * the error classes clients match on (never on desc), and the reply keys
 * one side reads from the other. Parsing and writing: common/json_line.h.
 */
#ifndef KVMLU_CONTROL_WIRE_H
#define KVMLU_CONTROL_WIRE_H

/* Longest line either side accepts, without its newline. */
#define KVMLU_WIRE_LINE_MAX	(256 * 1024)
#define KVMLU_WIRE_CMD_MAX	63
#define KVMLU_WIRE_ID_STR_MAX	128
#define KVMLU_WIRE_DEPTH	16
/* A control client without a complete request line for this long is
 * closed (kvmlu-vmm --control-idle-ms sets it within these bounds). */
#define CONTROL_IDLE_MS_DEFAULT 10000
#define CONTROL_IDLE_MS_MIN 10
#define CONTROL_IDLE_MS_MAX 3600000

/* Error classes: stable names clients may depend on. */
#define KVMLU_ERR_PARSE		"ParseError"		/* not JSON, or not one object */
#define KVMLU_ERR_INVALID	"InvalidRequest"	/* bad keys, types or args */
#define KVMLU_ERR_DUPLICATE_KEY	"DuplicateKey"		/* a key twice in one object */
#define KVMLU_ERR_UNKNOWN_CMD	"UnknownCommand"
#define KVMLU_ERR_LINE_TOO_LONG	"LineTooLong"
#define KVMLU_ERR_PERMISSION	"PermissionDenied"
#define KVMLU_ERR_BUSY		"Busy"			/* too many clients, or work in progress */
#define KVMLU_ERR_NOT_PAUSED	"NotPaused"
#define KVMLU_ERR_NOT_RUNNING	"NotRunning"
#define KVMLU_ERR_TIMEOUT	"Timeout"
#define KVMLU_ERR_FAILED	"Failed"		/* the operation itself failed */
/* Host live update (a VMM's prepare-update, abort-update, restore). */
#define KVMLU_ERR_NOT_PRESERVABLE "NotPreservable"	/* a file LUO cannot keep */
#define KVMLU_ERR_NO_LUO	"NoLiveUpdate"		/* no usable /dev/liveupdate */
#define KVMLU_ERR_PREPARED	"AlreadyPrepared"	/* a session is held */
#define KVMLU_ERR_NOT_PREPARED	"NotPrepared"		/* abort without prepare */
#define KVMLU_ERR_HELD		"Held"			/* restored VM held, not running */
#define KVMLU_ERR_MISMATCH	"ChecksumMismatch"	/* restored memory differs */

/* Reply keys of a VMM that the agent reads. */
#define KVMLU_KEY_STATE		"state"		/* status: running, paused, held, ... */
#define KVMLU_KEY_MEMORY	"memory"	/* status, prepare-update: bytes of guest RAM */
#define KVMLU_KEY_BACKEND	"backend"	/* status, prepare-update: memfd, guest_memfd */
#define KVMLU_KEY_RESIDENT	"memory_resident" /* status: bytes of guest RAM in host memory */
#define KVMLU_KEY_PRESERVABLE	"preservable"	/* status: can prepare-update keep the RAM */
#define KVMLU_KEY_FOLIO		"memory_folio"	/* status: "2M" or "4K", memfd RAM only */
#define KVMLU_KEY_SESSION	"session"	/* prepare-update, update-status */
#define KVMLU_KEY_CHECKSUM	"checksum"	/* prepare-update: memory at pause */
#define KVMLU_KEY_PAUSED_AT	"paused_at_ns"	/* prepare-update, update-status */
#define KVMLU_KEY_RESUMED_AT	"resumed_at_ns"	/* update-status after a restore */
#define KVMLU_KEY_SUM_NOW	"checksum_now"	/* update-status after a restore */
#define KVMLU_KEY_VERIFIED	"memory_verified"
/* update-status after a restore: "running", "verified", "mismatch", "failed" */
#define KVMLU_KEY_VERIFICATION	"verification"
#define KVMLU_KEY_VERIFIED_AT	"verified_at_ns"	/* every chunk found equal */
#define KVMLU_KEY_VERIFY_MODE	"verify_mode"		/* "lazy" or "sync" */
#define KVMLU_KEY_PHASE		"phase"		/* update-status; status while held */
#define KVMLU_KEY_REASON	"reason"	/* why a restored VM is held */
#define KVMLU_KEY_PREPARE_MS	"prepare_ms"
#define KVMLU_KEY_RESTORE_MS	"restore_ms"
/* The steps of prepare_ms and restore_ms that kvmlu report shows per VM. */
#define KVMLU_KEY_PREPARE_PAUSED_MS	"prepare_paused_ms"
#define KVMLU_KEY_CAPTURE_MS		"capture_ms"
#define KVMLU_KEY_PRESERVE_RAM_MS	"preserve_ram_ms"
#define KVMLU_KEY_RETRIEVE_MS		"retrieve_ms"
#define KVMLU_KEY_VM_CREATE_MS		"vm_create_ms"
#define KVMLU_KEY_VERIFY_START_MS	"verify_start_ms"
#define KVMLU_KEY_STATE_RESTORE_MS	"state_restore_ms"
/* prepare-update's argument: ms of hashing RAM while the guest runs. */
#define KVMLU_ARG_RUNNING_HASH_MS	"running_hash_ms"

/*
 * domain-replace-qemu (the agent's socket, docs/libvirt.md): a running
 * libvirt domain's QEMU replaced with its RAM kept in place.
 */
#define KVMLU_CMD_REPLACE_QEMU	"domain-replace-qemu"
#define KVMLU_ARG_DOMAIN	"domain"	/* its name or UUID */
#define KVMLU_KEY_UUID		"uuid"
#define KVMLU_KEY_OLD_PID	"old_pid"	/* the QEMU replaced */
#define KVMLU_KEY_NEW_PID	"new_pid"	/* the QEMU that runs it now */
#define KVMLU_KEY_IMAGE_BYTES	"image_bytes"	/* the managed save: device state only */
#define KVMLU_KEY_CHECKSUM_AFTER "checksum_after"	/* RAM once the new QEMU has it */
#define KVMLU_KEY_RAM_HELD	"ram_held"	/* the agent still holds the RAM */

/*
 * lvram-open (the agent's lvram socket, kvmlu-qemu's request for RAM the
 * agent holds): -> {"cmd":"lvram-open","args":{"uuid":U,"size":N}}
 * <- {"ok":true,"return":{"held":B,"ignore_shared":B}} with the memfd
 * attached (SCM_RIGHTS) when held.
 */
#define KVMLU_LVRAM_CMD_OPEN		"lvram-open"
#define KVMLU_LVRAM_KEY_UUID		"uuid"
#define KVMLU_LVRAM_KEY_SIZE		"size"
#define KVMLU_LVRAM_KEY_HELD		"held"
#define KVMLU_LVRAM_KEY_IGNORE_SHARED	"ignore_shared"

#endif /* KVMLU_CONTROL_WIRE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the agent's socket and every VMM's control socket share on the
 * wire (docs/control-protocol.md): one JSON object per line each way,
 *   -> {"cmd":"pause","id":7,"args":{...}}     id and args optional
 *   <- {"ok":true,"return":{...},"id":7}
 *   <- {"ok":false,"error":{"class":"...","desc":"..."},"id":7}
 * the error classes clients match on (never on desc), the protocol's
 * version, and every key a request or a reply has on either socket: code
 * that speaks the wire names a key only through these. (The live-upgrade
 * handshake between two VMMs has its own messages, vmm/upgrade/upgrade_wire.h;
 * the agent's journal is a file format, agent/journal/journal_json.c.)
 * Parsing and writing: common/json_line.h.
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

/*
 * The protocol's version, in every `status` reply (VMM, held VMM, agent)
 * under KVMLU_KEY_PROTOCOL. 2: every duration and time in a reply is an
 * integer in ns (`..._ns`); 1 (no `protocol` key) sent float ms and us.
 * The agent drives only VMMs that say 2 (agent/daemon/vmm_client.h).
 * Limits a person sets in a request (timeout_ms, running_hash_ms) stay
 * integer ms, the unit they are typed in.
 */
#define KVMLU_WIRE_PROTOCOL	2

/* The envelope (common/json_line.c). */
#define KVMLU_WIRE_CMD		"cmd"
#define KVMLU_WIRE_ID		"id"
#define KVMLU_WIRE_ARGS		"args"
#define KVMLU_WIRE_OK		"ok"
#define KVMLU_WIRE_RETURN	"return"
#define KVMLU_WIRE_ERROR	"error"
#define KVMLU_WIRE_CLASS	"class"
#define KVMLU_WIRE_DESC		"desc"

/* Request arguments (VMM). */
#define KVMLU_ARG_TIMEOUT_MS	"timeout_ms"	/* guest-verify, upgrade */
#define KVMLU_ARG_INCREMENTAL	"incremental"	/* checksum */
#define KVMLU_ARG_PATH		"path"		/* save-state */
#define KVMLU_ARG_CHECKSUM	"checksum"	/* save-state, upgrade */
#define KVMLU_ARG_OVERWRITE	"overwrite"	/* save-state */
#define KVMLU_ARG_BINARY	"binary"	/* upgrade */
/* prepare-update's argument: ms of hashing RAM while the guest runs. */
#define KVMLU_ARG_RUNNING_HASH_MS	"running_hash_ms"

/* Reply keys of a VMM; the agent reads those marked. */
#define KVMLU_KEY_PROTOCOL	"protocol"	/* status: KVMLU_WIRE_PROTOCOL (agent reads) */
#define KVMLU_KEY_VERSION	"version"	/* status: KVMLU_VERSION */
#define KVMLU_KEY_NAME		"name"
#define KVMLU_KEY_PID		"pid"
#define KVMLU_KEY_STATE		"state"		/* status: running, paused, held, ... */
#define KVMLU_KEY_VCPUS		"vcpus"		/* status, save-state (agent reads) */
#define KVMLU_KEY_MEMORY	"memory"	/* status, prepare-update: bytes of guest RAM;
						 * upgrade: "shared", "linked", "copied" */
#define KVMLU_KEY_BACKEND	"backend"	/* status, prepare-update: memfd, guest_memfd */
#define KVMLU_KEY_RESIDENT	"memory_resident" /* status: bytes of guest RAM in host memory */
#define KVMLU_KEY_PRESERVABLE	"preservable"	/* status: can prepare-update keep the RAM */
#define KVMLU_KEY_FOLIO		"memory_folio"	/* status: "2M" or "4K", memfd RAM only */
#define KVMLU_KEY_SHMEM_ENABLED	"shmem_enabled"	/* status: the host's THP setting for shmem */
#define KVMLU_KEY_MEMORY_HUGE	"memory_huge"	/* status: bytes mapped with 2 MiB entries */
#define KVMLU_KEY_UPTIME_NS	"uptime_ns"	/* status: since the VM was created */
#define KVMLU_KEY_SERIAL_BYTES	"serial_bytes"
#define KVMLU_KEY_UNHANDLED_IO	"unhandled_io"	/* status: counts of accesses nothing took */
#define KVMLU_KEY_PIO_READS	"pio_reads"
#define KVMLU_KEY_PIO_WRITES	"pio_writes"
#define KVMLU_KEY_MMIO_READS	"mmio_reads"
#define KVMLU_KEY_MMIO_WRITES	"mmio_writes"
/* status: "disks" and "nets", one object per virtio device. */
#define KVMLU_KEY_DISKS		"disks"
#define KVMLU_KEY_NETS		"nets"
#define KVMLU_KEY_SLOT		"slot"
#define KVMLU_KEY_MMIO_BASE	"mmio_base"
#define KVMLU_KEY_GSI		"gsi"
/* status: "mmio" or "pci" (--virtio-transport); per device with pci: */
#define KVMLU_KEY_VIRTIO_TRANSPORT "virtio_transport"
#define KVMLU_KEY_PCI_DEVICE	"pci_device"	/* its device number on bus 0 */
#define KVMLU_KEY_MSIX_SENT	"msix_sent"	/* MSIs delivered with KVM_SIGNAL_MSI */
#define KVMLU_KEY_MSIX_LOST	"msix_lost"	/* interrupts with no vector or MSI-X off */
#define KVMLU_KEY_DRIVER_STATUS	"driver_status"
#define KVMLU_KEY_DEVICE_ERROR	"device_error"
#define KVMLU_KEY_ID		"id"
#define KVMLU_KEY_PATH		"path"		/* disk (agent reads), save-state */
#define KVMLU_KEY_DEV		"dev"		/* disk: st_dev or st_rdev (agent reads) */
#define KVMLU_KEY_INO		"ino"		/* disk (agent reads) */
#define KVMLU_KEY_SIZE		"size"		/* disk: bytes told the guest (agent reads) */
#define KVMLU_KEY_SIZE_NOW	"size_now"
#define KVMLU_KEY_DELETED	"deleted"
#define KVMLU_KEY_PROBLEM	"problem"	/* disk (agent reads) */
#define KVMLU_KEY_READONLY	"readonly"
#define KVMLU_KEY_REQUESTS	"requests"
#define KVMLU_KEY_IO_ERRORS	"io_errors"
#define KVMLU_KEY_TAP		"tap"
#define KVMLU_KEY_BRIDGE	"bridge"
#define KVMLU_KEY_MAC		"mac"
#define KVMLU_KEY_RX_PACKETS	"rx_packets"
#define KVMLU_KEY_RX_BYTES	"rx_bytes"
#define KVMLU_KEY_RX_DROPPED	"rx_dropped"
#define KVMLU_KEY_TX_PACKETS	"tx_packets"
#define KVMLU_KEY_TX_BYTES	"tx_bytes"
#define KVMLU_KEY_TX_DROPPED	"tx_dropped"

/* pause, resume, shutdown; a held VM's status, resume and shutdown. */
#define KVMLU_KEY_CHANGED	"changed"	/* the run state changed */
#define KVMLU_KEY_LATENCY_NS	"latency_ns"	/* the vCPUs stopped or started */
#define KVMLU_KEY_RESUMABLE	"resumable"
#define KVMLU_KEY_CONTROL	"control"	/* the socket a held VM answers on */
#define KVMLU_KEY_RELEASED	"released"

/* checksum, guest-verify, save-state. */
#define KVMLU_KEY_DIGEST	"digest"
#define KVMLU_KEY_FULL_DIGEST	"full_digest"
#define KVMLU_KEY_EQUAL		"equal"
#define KVMLU_KEY_ALGORITHM	"algorithm"
#define KVMLU_KEY_BYTES		"bytes"
#define KVMLU_KEY_CHECKSUM_NS	"checksum_ns"	/* checksum; update-status: verifying */
#define KVMLU_KEY_FULL_CHECKSUM_NS "full_checksum_ns"
#define KVMLU_KEY_GBPS		"gbps"		/* a rate (GB/s), three decimals */
#define KVMLU_KEY_THREADS	"threads"
#define KVMLU_KEY_VERIFIED_GUEST "verified"	/* guest-verify */
#define KVMLU_KEY_RESULT	"result"
#define KVMLU_KEY_RESULT_CODE	"result_code"
#define KVMLU_KEY_VERIFY_NS	"verify_ns"	/* guest-verify: request to answer */
#define KVMLU_KEY_UUID		"uuid"
/* The memory checksum of prepare-update and checksum {"incremental":true}. */
#define KVMLU_KEY_SUM_INCREMENTAL	"checksum_incremental"
#define KVMLU_KEY_SUM_FULL_REASON	"checksum_full_reason"
#define KVMLU_KEY_SUM_PAUSED_NS		"checksum_paused_ns"
#define KVMLU_KEY_SUM_PAUSED_CHUNKS	"checksum_paused_chunks"
#define KVMLU_KEY_SUM_DIRTY_PAGES	"checksum_dirty_pages"
#define KVMLU_KEY_SUM_RUNNING_NS	"checksum_running_ns"
#define KVMLU_KEY_SUM_RUNNING_CHUNKS	"checksum_running_chunks"
#define KVMLU_KEY_SUM_ROUNDS		"checksum_rounds"
/* The running_hash_ms it ran with: a limit, in the unit it was given. */
#define KVMLU_KEY_SUM_RUNNING_BUDGET_MS	"checksum_running_budget_ms"

/* upgrade. */
#define KVMLU_KEY_BLACKOUT_NS	"blackout_ns"	/* pause to resumed in the new process */
#define KVMLU_KEY_PAUSE_NS	"pause_ns"	/* upgrade, prepare-update: the vCPUs stopping */
#define KVMLU_KEY_CREATE_NS	"create_ns"	/* the new process's vm_create() */
#define KVMLU_KEY_COPIED_BYTES	"memory_copied_bytes"

/* prepare-update, abort-update, update-status. */
#define KVMLU_KEY_SESSION	"session"	/* prepare-update, update-status */
#define KVMLU_KEY_CHECKSUM	"checksum"	/* prepare-update: memory at pause */
#define KVMLU_KEY_FILES		"files"
#define KVMLU_KEY_STATE_BYTES	"state_bytes"
#define KVMLU_KEY_PAUSED_AT	"paused_at_ns"	/* prepare-update, update-status */
#define KVMLU_KEY_PREPARED_AT	"prepared_at_ns"
#define KVMLU_KEY_RESUME_NS	"resume_ns"	/* abort-update: the vCPUs starting */
#define KVMLU_KEY_PAUSED_NS	"paused_ns"	/* abort-update: how long it was paused */
#define KVMLU_KEY_RESUMED_AT	"resumed_at_ns"	/* update-status after a restore */
#define KVMLU_KEY_RESTORE_STARTED_AT "restore_started_at_ns"
#define KVMLU_KEY_SUM_NOW	"checksum_now"	/* update-status after a restore */
#define KVMLU_KEY_SUM_RECORDED	"checksum_recorded"
#define KVMLU_KEY_SESSION_FINISHED "session_finished"
#define KVMLU_KEY_VERIFIED	"memory_verified"
/* update-status after a restore: "running", "verified", "mismatch", "failed" */
#define KVMLU_KEY_VERIFICATION	"verification"
#define KVMLU_KEY_VERIFIED_AT	"verified_at_ns"	/* every chunk found equal */
#define KVMLU_KEY_TO_VERIFIED_NS "to_verified_ns"	/* restore start to verified_at_ns */
#define KVMLU_KEY_VERIFY_MODE	"verify_mode"		/* "lazy" or "sync" */
#define KVMLU_KEY_VERIFY_FALLBACK "verify_fallback"
#define KVMLU_KEY_VERIFY_CHUNKS	"verify_chunks"
#define KVMLU_KEY_VERIFY_CHUNKS_DONE "verify_chunks_done"
#define KVMLU_KEY_VERIFY_FAULTS	"verify_faults"
#define KVMLU_KEY_VERIFY_FAULT_CHUNKS "verify_fault_chunks"
#define KVMLU_KEY_VERIFY_THREADS "verify_threads"
#define KVMLU_KEY_TSC_ADJUSTED	"tsc_adjusted"
#define KVMLU_KEY_TSC_SHIFT	"tsc_shift"
#define KVMLU_KEY_TSC_KHZ_SAVED	"tsc_khz_saved"
#define KVMLU_KEY_TSC_KHZ_NOW	"tsc_khz_now"
#define KVMLU_KEY_PHASE		"phase"		/* update-status; status while held */
#define KVMLU_KEY_REASON	"reason"	/* why a restored VM is held */
/*
 * Durations in ns the agent reads: prepare-update's whole and restore's
 * time to the first guest instruction (update-status), and the steps of
 * them that kvmlu report shows per VM.
 */
#define KVMLU_KEY_PREPARE_NS		"prepare_ns"	/* also upgrade: the new process's start */
#define KVMLU_KEY_RESTORE_NS		"restore_ns"	/* also upgrade: state to resumed */
#define KVMLU_KEY_PREPARE_PAUSED_NS	"prepare_paused_ns"
#define KVMLU_KEY_CAPTURE_NS		"capture_ns"
#define KVMLU_KEY_CAPTURE_VM_NS		"capture_vm_ns"
#define KVMLU_KEY_PRESERVE_NS		"preserve_ns"
#define KVMLU_KEY_PRESERVE_RAM_NS	"preserve_ram_ns"
#define KVMLU_KEY_RETRIEVE_NS		"retrieve_ns"
#define KVMLU_KEY_VM_CREATE_NS		"vm_create_ns"
#define KVMLU_KEY_VERIFY_START_NS	"verify_start_ns"
#define KVMLU_KEY_STATE_RESTORE_NS	"state_restore_ns"

/* The agent's socket: request arguments. */
#define KVMLU_ARG_LAST		"last"		/* report */
#define KVMLU_ARG_KERNEL	"kernel"	/* host-update */
#define KVMLU_ARG_INITRD	"initrd"
#define KVMLU_ARG_APPEND	"append"
#define KVMLU_ARG_DRY_RUN	"dry-run"
/* libvirt-event, from kvmlu-libvirt-hook; also the domains in `vms`. */
#define KVMLU_ARG_DOMAIN	"domain"
#define KVMLU_ARG_OP		"op"
#define KVMLU_ARG_SUB		"sub"
#define KVMLU_ARG_EXTRA		"extra"
/* The agent's replies (and status's KVMLU_KEY_PROTOCOL, VERSION, PID). */
#define KVMLU_KEY_SOCKET	"socket"
#define KVMLU_KEY_RUN_DIR	"run_dir"
#define KVMLU_KEY_HISTORY_DIR	"history_dir"
#define KVMLU_KEY_LIVEUPDATE	"liveupdate"
#define KVMLU_KEY_ALLOW_KEXEC	"allow_kexec"
#define KVMLU_KEY_VMS		"vms"
#define KVMLU_KEY_LIBVIRT_DOMAINS "libvirt_domains"
#define KVMLU_KEY_LIBVIRT_ACTIVE "libvirt_domains_active"
#define KVMLU_KEY_UPDATE	"update"
#define KVMLU_KEY_UPDATE_ID	"update_id"
#define KVMLU_KEY_KIND		"kind"		/* vms: "kvmlu-vmm" or "libvirt" */
#define KVMLU_KEY_ANSWERED	"answered"
#define KVMLU_KEY_MEMORY_BYTES	"memory_bytes"
#define KVMLU_KEY_CPUS		"cpus"
#define KVMLU_KEY_ERROR		"error"
#define KVMLU_KEY_UPDATED_NS	"updated_ns"	/* a libvirt domain's last event */
#define KVMLU_KEY_UPDATES	"updates"	/* report: the journals */
#define KVMLU_KEY_UNREADABLE	"unreadable"
#define KVMLU_KEY_OUTCOME	"outcome"	/* host-update */
#define KVMLU_KEY_REPORT	"report"	/* host-update: the journal */
/* host-update's event lines before its reply. */
#define KVMLU_KEY_EVENT		"event"		/* "phase" or "vm" */
#define KVMLU_KEY_VM		"vm"
#define KVMLU_KEY_DONE		"done"
#define KVMLU_KEY_TOTAL		"total"
#define KVMLU_KEY_PHASE_NS	"ns"		/* a finished phase's duration */
/*
 * upgrade's reply (and the new process's "resumed" message): the resume
 * pipeline's steps in the new process (vmm/resume/resume.h), an object
 * of integer ns.
 */
#define KVMLU_KEY_STEPS			"steps"
#define KVMLU_KEY_STEP_BUILD_NS		"build_ns"	/* the VM on the RAM files */
#define KVMLU_KEY_STEP_VERIFY_NS	"verify_ns"	/* memory map, copy, checksum */
#define KVMLU_KEY_STEP_APPLY_NS		"apply_ns"	/* TSC, vCPU and device state */
#define KVMLU_KEY_STEP_START_NS		"start_ns"	/* vCPU threads started */

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

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host live update of one VM: its RAM files and state FDT kept across a
 * host kexec in the LUO session "kvmlu/vm/<name>" (common/luo_session.h).
 *
 * Before the kexec (control commands, prepare.c):
 *   prepare-update  while the guest runs: hash its RAM with dirty
 *                   logging, create the session, preserve the RAM files;
 *                   then pause, capture the state with the memory checksum
 *                   (its last round) and chunk digests, seal it into a
 *                   memfd, preserve that, keep the session fd, answer
 *                   ready and stay paused until the kexec.
 *   abort-update    close the session (the kernel unpreserves) and resume
 *                   as before the prepare.
 *   update-status   what this process holds or restored (for the agent).
 * After the kexec (`kvmlu-vmm restore --session`, live_update_restore*.c):
 *   check what can be checked first, retrieve the session, read and
 *   validate the state (the checks every restore uses), build the VM on
 *   the retrieved files, register the RAM for lazy verification (each
 *   chunk checked against its digest at pause before its first access;
 *   lazy_restore.c) or compare the whole checksum now, restore vCPU and
 *   device state, move the guest TSC onto the new boot's TSC (tsc.c);
 *   main then starts the vCPUs and the session is finished (lazy: once
 *   every chunk is verified). Once the session is taken no
 *   failure ends the process: the VM is held, paused and reachable
 *   (hold.h), until the cause is fixed and `resume` retries.
 *   On a checksum mismatch the vCPUs never start (lazy: they are paused
 *   before any touches the chunk) and the session stays open, so its
 *   files live as long as this process.
 */
#ifndef KVMLU_VMM_LIVE_UPDATE_H
#define KVMLU_VMM_LIVE_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/luo_session.h"
#include "guestmem/guestmem.h"
#include "vmm/control/commands.h"
#include "vmm/state/state_vm.h"

struct vm;
struct guestmem_lazy_verify;

/*
 * Register prepare-update, abort-update and update-status with the
 * control dispatcher (control_register()); before any server starts.
 */
int live_update_register_commands(void);

/* True while prepare-update holds a session: resume must be refused. */
bool live_update_prepared(void);

/* What the restore path learned, kept for update-status and main. */
struct live_update_restore {
	struct luo_session session;	/* retrieved; open until finished */
	char vm_name[STATE_NAME_MAX + 1];
	int state_fd;			/* retrieved, not read yet; -1 */
	void *state_blob;		/* the state memfd's FDT, as taken */
	size_t state_size;
	int ram_fds[GUESTMEM_MAX_REGIONS];	/* retrieved RAM files, -1 past nr_ram */
	uint32_t nr_ram;
	/*
	 * "restoring", "held", "checksum-mismatch", then "restored" once the
	 * vCPUs run (update-status "phase"); reason says why it is held.
	 */
	const char *phase;
	char reason[512];
	bool memory_verified;		/* checksum now == checksum at pause */
	bool has_recorded;		/* the state carried a checksum */
	char checksum_recorded[33];
	char checksum_now[33];
	uint64_t paused_wall_ns;	/* the state's: CLOCK_REALTIME at the capture of the clock */
	uint64_t started_wall_ns;	/* restore began in this boot */
	uint64_t restored_wall_ns;	/* state restored, ready to start */
	uint64_t resumed_wall_ns;	/* vCPUs running (live_update_restore_finish) */
	uint64_t checksum_ns;		/* time the verification took */
	/* On a mismatch, when the state has chunk digests: which chunks changed. */
	uint64_t nr_chunks, chunks_differ, first_differ_chunk;
	uint64_t retrieve_ns;		/* RETRIEVE_FD of the RAM files (kernel refills them) */
	/* The build's steps, for the report: VM, verification's start, vCPU and device state. */
	uint64_t vm_create_ns, verify_start_ns, state_restore_ns;
	int64_t tsc_shift;		/* added to each vCPU's TSC offset */
	uint32_t tsc_khz_saved;		/* guest TSC rate in the state */
	uint32_t tsc_khz_now;		/* the rate the vCPUs run at now */
	bool tsc_adjusted;
	size_t state_bytes;
	/*
	 * How the memory was verified (lazy_restore.c): "lazy" (the guest
	 * runs while chunks are verified on first touch and in the
	 * background) or "sync" (all of it before the guest runs);
	 * verify_fallback says why not lazy. verification: "running",
	 * "verified", "mismatch", "failed".
	 */
	bool want_lazy;
	bool lazy;
	struct guestmem_lazy_verify *lv;	/* while lazy verification runs */
	char verify_mode[8];
	char verify_fallback[256];
	char verification[16];
	uint64_t verified_wall_ns;	/* every chunk found equal */
	uint64_t verify_chunks_done;	/* decided so far */
	uint64_t verify_faults;		/* first touches that waited in a fault */
	uint64_t verify_fault_chunks;	/* chunks hashed because the guest waited on them */
	unsigned int verify_threads;
};

/* Holds nothing: every fd -1. */
void live_update_restore_init(struct live_update_restore *lu);

/*
 * After a kexec: retrieve the session (restore.c). Once
 * lu->session.fd >= 0 this process holds the only copy of the VM.
 */
int live_update_restore_take(const char *session_name, struct live_update_restore *lu,
			     char *err, size_t errlen);

/* Then its state and RAM files; may be called again after a failure. */
int live_update_restore_take_files(struct live_update_restore *lu, char *err, size_t errlen);
bool live_update_restore_have_files(const struct live_update_restore *lu);

/*
 * Build vm from what lu took. 0: vm is created and, if lu->memory_verified,
 * restored and ready for vm_start(); if not verified, vm exists but its
 * vCPUs must not run. -errno: no vm (destroyed), lu unchanged: the caller
 * may fix the cause and build again.
 */
int live_update_restore_build(struct live_update_restore *lu, int serial_fd, struct vm *vm,
			      char *err, size_t errlen);

/* Once the vCPUs run: FINISH the session; the kernel lets go of the files. */
int live_update_restore_finish(struct live_update_restore *lu, char *err, size_t errlen);

/* Close whatever lu holds (an unfinished session is finished by the kernel). */
void live_update_restore_release(struct live_update_restore *lu);

/* Let update-status report the restore of this process (any thread). */
void live_update_restore_publish(const struct live_update_restore *lu);

/*
 * Move every vCPU's TSC offset so the guest TSC continues from its value
 * at capture by the wall time that passed, whatever the new boot's host
 * TSC reads (Documentation/virt/kvm/devices/vcpu.rst, KVM_VCPU_TSC_OFFSET).
 * Call after the state (with the clock) was restored, before vCPUs run.
 * *adjusted false: the state or this host lacks what it needs (no host
 * TSC in KVM_GET_CLOCK, or no TSC offset attribute); offsets left as saved.
 */
int live_update_tsc_adjust(struct vm *vm, const struct state_vm *s, int64_t *shift,
			   bool *adjusted, char *err, size_t errlen);

/*
 * main() of `kvmlu-vmm restore --session S [--control SOCK] [--serial F]`
 * (restore_main.c); returns the exit status: 0 clean stop;
 * 3 a check before the take failed, so the session is still in the
 * kernel for another restore; 2 checksum mismatch, the VM never ran; 1
 * any other failure, or a held VM released by shutdown or a signal.
 */
int live_update_restore_main(const char *session, const char *control, const char *serial,
			     const char *verify);

/*
 * Lazy verification after a kexec (lazy_restore.c; guestmem/lazy_verify.h).
 * wanted: lazy unless --verify sync (opt) or KVMLU_RESTORE_VERIFY=sync.
 * start: register vm's RAM before the state is restored; -errno with
 * why when it cannot (the caller verifies everything instead).
 * failed: a chunk was found bad already. stop: the verifier gone
 * (after a mismatch only once the vCPU threads are). watch: the main
 * thread until the verdict: LIVE_UPDATE_LAZY_VERIFIED (verifier stopped,
 * nothing published: FINISH next, then finished() opens the gate), _MISMATCH (VM held and paused), _STOPPED (the VM is
 * stopping), or -errno. gate: on the control thread, commands that read
 * all guest RAM wait for the verdict (CONTROL_GATE_*).
 */
#define LIVE_UPDATE_LAZY_WAIT_MS	60000
enum { LIVE_UPDATE_LAZY_VERIFIED = 0, LIVE_UPDATE_LAZY_MISMATCH, LIVE_UPDATE_LAZY_STOPPED };
struct live_update_hold;
struct json_line_error;
bool live_update_verify_lazy_wanted(const char *opt, char *why, size_t whylen);
int live_update_lazy_start(struct vm *vm, const struct state_vm *s, struct live_update_restore *lu,
			   char *err, size_t errlen);
bool live_update_lazy_failed(struct live_update_restore *lu);
/* Before the vCPUs start, after a failure: wait for every chunk's verdict. */
void live_update_lazy_settle(struct live_update_restore *lu);
void live_update_lazy_stop(struct live_update_restore *lu);
int live_update_lazy_watch(struct live_update_restore *lu, struct live_update_hold *h,
			   struct vm *vm, int sig_fd);
void live_update_lazy_finished(void);
int live_update_lazy_gate(const char *cmd, const char *vm_name, struct json_line_error *e);

/*
 * Before state_vm_restore(): keep each vCPU at its saved TSC rate if KVM
 * can (TSC scaling), else switch the state to this host's rate, which the
 * new kernel's calibration may put a few hundred ppm off the old one.
 */
int live_update_tsc_rate_fit(struct vm *vm, struct state_vm *s, uint32_t *saved_khz,
			     uint32_t *now_khz, char *err, size_t errlen);

#endif /* KVMLU_VMM_LIVE_UPDATE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resuming a VM from a captured state: the one pipeline both mechanisms
 * use, a live upgrade (vmm/upgrade/incoming.c, same host kernel, files
 * passed over a socket) and a restore after a host kexec
 * (vmm/live_update/restore.c, files retrieved from a LUO session).
 *
 * The caller fills a plan (struct resume_plan: the VM to build, its RAM
 * files, its devices' configs, the parsed state, how to verify memory), then
 * calls, in this order and no other (docs/architecture.md, "Resuming a
 * VM"):
 *
 *   resume_build()   the VM on the plan's RAM files (memfd: adopted;
 *                    guest_memfd: linked, or fresh files to fill), its
 *                    devices on the plan's fds, paths or names. No vCPU
 *                    state yet; a live upgrade does this before the
 *                    state exists, while the guest still runs elsewhere.
 *   resume_verify()  the state's memory map is the VM's; RAM that could
 *                    not be shared is copied; the memory is checked
 *                    against the checksum at pause: none, full (all of
 *                    it now) or lazy (each chunk before its first
 *                    access, while the guest runs).
 *   resume_apply()   TSC rate, vCPU and device state, TSC offset. Only
 *                    on memory that passed (or is being verified lazily).
 *   resume_start()   the vCPUs, running or parked. Refused on memory
 *                    found changed: such a VM never runs.
 *
 * Each step fills the report (struct resume_report): how long it took,
 * the checksums, the verification, the TSC. A failing step returns
 * -errno with why in err and changes nothing before it: resume_build()
 * leaves no VM, the others leave the VM built and unstarted, so the
 * caller decides (an upgrade says "error" and exits, the old process
 * keeps the guest; a restore after a kexec holds the VM and may build
 * again). What is not here: where the files come from, the commit point
 * of an upgrade, holding a VM and the lazy verdict's watch (live_update/).
 */
#ifndef KVMLU_VMM_RESUME_H
#define KVMLU_VMM_RESUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "guestmem/guestmem.h"
#include "vmm/device_config.h"
#include "vmm/state/state_vm.h"
#include "vmm/vm_config.h"

struct vm;
struct guestmem_lazy_verify;

#define RESUME_MAX_DEVICES	8	/* VM_VIRTIO_MAX_DEVICES */

enum resume_verify_mode {
	RESUME_VERIFY_NONE,	/* no checksum to compare (an upgrade without one) */
	RESUME_VERIFY_FULL,	/* all RAM hashed and compared before the guest runs */
	RESUME_VERIFY_LAZY,	/* each chunk before its first access; FULL where it cannot */
};

/* What a resume starts from. Fds are borrowed: the filler closes them. */
struct resume_plan {
	/* The VM: from an upgrade's "prepare", or from the state after a kexec. */
	char name[STATE_NAME_MAX + 1];
	uint64_t ram_size;
	unsigned int nr_vcpus;
	enum guestmem_backend backend;
	int serial_fd;			/* UART output; not owned by the VM either */
	/* RAM files in region order; the VM adopts (memfd) or links (guest_memfd) them. */
	unsigned int nr_ram;
	int ram_fds[GUESTMEM_MAX_REGIONS];
	/* The state's region i names its file as ram_token_base + i. */
	uint64_t ram_token_base;
	/*
	 * guest_memfd where the kernel cannot link: the VM's fresh files are
	 * filled from ram_fds in resume_verify(). Only where the source is
	 * paused and stays readable (an upgrade); else a link that fails is
	 * an error.
	 */
	bool ram_copy_ok;
	/*
	 * The devices, one list in slot order (vmm/device_config.h): on an
	 * upgrade each with the old process's open fd (its type's
	 * handover_read), which the device checks is the one recorded; after
	 * a kexec each without one, to open by path or name (its type's
	 * reopen), and state_vm_restore() checks it is the one recorded.
	 */
	unsigned int nr_devs;
	struct vm_device_config devs[RESUME_MAX_DEVICES];
	/* How the guest reaches them: the upgrade's "prepare", or the state's. */
	enum vm_virtio_transport transport;
	/* The state, read and validated by resume_plan_load_state(). */
	bool have_state;
	struct state_vm state;
	enum resume_verify_mode verify;
	const char *verify_why;		/* FULL: why not LAZY, for the report; NULL: none */
	/* The host booted since the capture (kexec): move the guest TSC onto this boot's. */
	bool new_boot;
	bool run;			/* false: vCPUs parked before their first KVM_RUN */
};

enum resume_memory {
	RESUME_MEMORY_SHARED,	/* memfd: the same files */
	RESUME_MEMORY_LINKED,	/* guest_memfd: the same memory, KVM_LINK_GUEST_MEMFD */
	RESUME_MEMORY_COPY,	/* guest_memfd without the link: fresh files, to fill */
	RESUME_MEMORY_COPIED,	/* ... filled */
};

/* What a resume did and what it cost. */
struct resume_report {
	/* Each step's time, CLOCK_MONOTONIC ns (resume_verify: the copy too). */
	uint64_t build_ns, verify_ns, apply_ns, start_ns;
	enum resume_memory memory;
	uint64_t copied_bytes;
	/* Verification: the mode used (LAZY asked may end FULL: fallback says why). */
	enum resume_verify_mode verify_mode;
	char verify_fallback[256];
	char verification[16];		/* "", "running", "verified", "mismatch", "failed" */
	bool memory_verified;		/* checksum now == checksum at pause */
	bool has_recorded;		/* the state carried a checksum */
	char checksum_recorded[33];
	char checksum_now[33];
	uint64_t nr_chunks, chunks_differ, first_differ_chunk;
	uint64_t checksum_ns;		/* hashing: the full pass, or lazy start to verdict */
	uint64_t verified_wall_ns;	/* every chunk decided */
	uint64_t verify_chunks_done, verify_faults, verify_fault_chunks;
	unsigned int verify_threads;
	struct guestmem_lazy_verify *lazy;	/* while lazy verification runs */
	/* TSC */
	uint32_t tsc_khz_saved, tsc_khz_now;
	int64_t tsc_shift;
	bool tsc_adjusted;
};

/* "shared", "linked", "copied": how the VM got its RAM (an upgrade's reply says it). */
const char *resume_memory_name(enum resume_memory m);
/*
 * The report's step times into o as KVMLU_KEY_STEPS, an object of
 * integer ns: build_ns, verify_ns, apply_ns, start_ns
 * (include/kvmlu/control_wire.h).
 */
void resume_report_steps(const struct resume_report *r, json_object *o);

/* Empty plan and report: no fds, no state. */
void resume_plan_init(struct resume_plan *p);
void resume_report_init(struct resume_report *r);
/* The state only (fds stay the filler's). Safe twice. */
void resume_plan_free(struct resume_plan *p);

/*
 * Read and validate an untrusted state blob into p->state (every check
 * before KVM sees any of it, the same for both mechanisms); expect_vcpus
 * 0 accepts any count. A state loaded before is freed first.
 */
int resume_plan_load_state(struct resume_plan *p, const void *blob, size_t size,
			   uint32_t expect_vcpus, char *err, size_t errlen);
/* The state's regions name the files ram_token_base + i from offset 0. */
int resume_plan_check_tokens(const struct resume_plan *p, char *err, size_t errlen);
/*
 * After a kexec: the VM's shape, and each device's config to open it
 * again (its type's reopen: disks by path, taps by name), from the state.
 */
void resume_plan_from_state(struct resume_plan *p);

/* The four steps, in this order (see the top of this file). */
int resume_build(const struct resume_plan *p, struct vm *vm, struct resume_report *r,
		 char *err, size_t errlen);
int resume_verify(struct resume_plan *p, struct vm *vm, struct resume_report *r,
		  char *err, size_t errlen);
int resume_apply(struct resume_plan *p, struct vm *vm, struct resume_report *r,
		 char *err, size_t errlen);
int resume_start(const struct resume_plan *p, struct vm *vm, struct resume_report *r,
		 char *err, size_t errlen);

/* "sync" (FULL), "lazy", "" (NONE), as update-status shows it. */
const char *resume_verify_mode_name(enum resume_verify_mode m);

/*
 * Whether the memory lets the guest run: verified, nothing to verify,
 * or being verified lazily with no chunk found bad yet.
 */
bool resume_memory_ok(const struct resume_report *r);
/* Why not, for a message: "recorded at pause X, now Y (n of m chunks ... differ, ...)". */
void resume_mismatch_desc(const struct resume_report *r, char *buf, size_t len);

/*
 * Lazy verification (verify.c; guestmem/lazy_verify.h), while the guest
 * runs. failed: a chunk was found bad, or could not be checked. settle:
 * every chunk decided now, then the verdict (before a start, after a
 * failure). note: progress into r. verdict: the checksum and
 * verification once every chunk is decided. stop: the verifier gone
 * (after a mismatch only once no vCPU thread is left: it keeps them off
 * the bad chunk).
 */
bool resume_verify_failed(const struct resume_report *r);
void resume_verify_settle(struct resume_report *r);
void resume_verify_note(struct resume_report *r);
void resume_verify_verdict(struct resume_report *r);
void resume_verify_stop(struct resume_report *r);

/*
 * The guest TSC (tsc.c). rate_fit, before state_vm_restore(): keep each
 * vCPU at its saved TSC rate if KVM can (TSC scaling), else switch the
 * state to this host's rate. adjust, after it and before any vCPU runs,
 * after a kexec: move every vCPU's TSC offset so the guest TSC continues
 * from its value at capture by the wall time that passed
 * (Documentation/virt/kvm/devices/vcpu.rst, KVM_VCPU_TSC_OFFSET);
 * *adjusted false when the state or this host lacks what it needs.
 */
int resume_tsc_rate_fit(struct vm *vm, struct state_vm *s, uint32_t *saved_khz,
			uint32_t *now_khz, char *err, size_t errlen);
int resume_tsc_adjust(struct vm *vm, const struct state_vm *s, int64_t *shift,
		      bool *adjusted, char *err, size_t errlen);

#endif /* KVMLU_VMM_RESUME_H */

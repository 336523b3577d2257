/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The witness guest's CPL 3 main program: it proves a VM's continuity.
 *
 * Happy path, per vCPU (all start at once, entry.S brings them here):
 *  1. vCPU 0 clears the bss, builds the IDT, checks the boot info, takes
 *     the boot id and releases the others, which wait for it in memory.
 *  2. Every vCPU fills its share of the memory pattern (pattern.c) and
 *     sets up its slots (slots.c); vCPU 0 waits for all, then prints
 *     `witness start boot=<id> cpus=<n> mem=<MiB> fill_ms=<n>`.
 *  3. Forever: tick (rewrite slots), and once a second (TSC-paced) print
 *     `witness boot=<id> cpu=<n> tick=<n> uptime_ms=<n>`. vCPU 0 then
 *     polls KVMLU_PORT_REQUEST; on KVMLU_REQ_VERIFY it checks the whole
 *     pattern and every vCPU's slots, prints `witness verify ...` and
 *     writes the result to KVMLU_PORT_RESULT.
 * Pause, save/restore in a new process, host kexec: all state is in guest
 * RAM and registers, so the ticks go on and the boot id stays. A guest
 * that restarts starts at step 1 again and gets a new boot id.
 * Unhappy paths: a bad boot info prints `witness FATAL boot_info ...` and
 * every vCPU halts; an exception prints `witness FATAL cpu=...` (fatal.c).
 */
#include <stdint.h>

#include <kvmlu/payload_abi.h>

#include "boot_id.h"
#include "boot_info.h"
#include "cpu_setup.h"
#include "layout.h"
#include "mix.h"
#include "pattern.h"
#include "serial.h"
#include "slots.h"
#include "x86.h"

/* Ticks between TSC reads: a few hundred microseconds of work. */
#define WITNESS_TICK_BATCH (1u << 16)
/* vCPU 0 says so once if the others have not all shown up by then. */
#define WITNESS_LATE_CPUS_MS 10000
/* Keeps the pattern seed from being the printed boot id itself. */
#define WITNESS_SEED_SALT 0x7769746e65737321ULL

enum witness_go {
	WITNESS_GO_WAIT,
	WITNESS_GO_RUN,
	WITNESS_GO_HALT,
};

struct witness_boot {
	uint64_t id;
	uint64_t seed;
	uint64_t tsc0;		/* uptime 0 */
	uint64_t fill_tsc;	/* when the fill started */
	enum boot_id_source id_source;
	struct boot_params p;
};

/* In .data: the image load resets it; the bss is not cleared yet when others read it. */
static uint32_t witness_go __attribute__((section(".data"))) = WITNESS_GO_WAIT;
static struct witness_boot witness_boot;
static uint32_t witness_filled;		/* vCPUs done with their share */
static uint32_t witness_started;	/* start line printed */

extern char __bss_start[], __bss_end[];

__attribute__((noreturn)) void witness_main(uint64_t cpu, const struct kvmlu_boot_info *bi);

static uint64_t witness_ms_since(uint64_t tsc)
{
	uint64_t now = x86_rdtsc();

	return now > tsc ? (now - tsc) / witness_boot.p.tsc_khz : 0;
}

static void witness_line_boot(struct serial_line *l, const char *prefix)
{
	serial_line_init(l);
	serial_line_str(l, prefix);
	serial_line_str(l, " boot=");
	serial_line_hex(l, witness_boot.id, 16);
}

static __attribute__((noreturn)) void witness_refuse_boot_info(const struct boot_info_error *err)
{
	struct serial_line l;

	serial_line_init(&l);
	serial_line_str(&l, "witness FATAL boot_info ");
	serial_line_str(&l, err->what);
	serial_line_str(&l, "=0x");
	serial_line_hex(&l, err->value, 0);
	serial_line_send(&l);
	__atomic_store_n(&witness_go, WITNESS_GO_HALT, __ATOMIC_RELEASE);
	cpu_halt_forever();
}

static void witness_boot_cpu0(const struct kvmlu_boot_info *bi)
{
	uint64_t tsc0 = x86_rdtsc();
	struct boot_info_error err;

	/*
	 * A fresh VM's RAM is zero anyway; clearing makes a payload that is
	 * reloaded into RAM that was kept (a reset) start from scratch too.
	 * The other vCPUs touch only .data and their .percpu stacks until
	 * witness_go says run.
	 */
	__builtin_memset(__bss_start, 0, (uintptr_t)(__bss_end - __bss_start));
	cpu_setup_build_tables();
	witness_boot.tsc0 = tsc0;

	if ((uintptr_t)bi != KVMLU_BOOT_INFO_GPA) {
		err.what = "gpa";
		err.value = (uintptr_t)bi;
		witness_refuse_boot_info(&err);
	}
	if (boot_info_read(bi, &witness_boot.p, &err))
		witness_refuse_boot_info(&err);

	witness_boot.id = boot_id_take(&witness_boot.id_source);
	witness_boot.seed = mix64(witness_boot.id ^ WITNESS_SEED_SALT);
	witness_boot.fill_tsc = x86_rdtsc();
	__atomic_store_n(&witness_go, WITNESS_GO_RUN, __ATOMIC_RELEASE);
}

static void witness_wait_go(void)
{
	uint32_t go;

	while ((go = __atomic_load_n(&witness_go, __ATOMIC_ACQUIRE)) == WITNESS_GO_WAIT)
		x86_pause();
	if (go != WITNESS_GO_RUN)
		cpu_halt_forever();
}

static void witness_fill_share(unsigned int cpu)
{
	const struct pattern_ram *ram = &witness_boot.p.ram;
	uint64_t pages = ram->bytes / PATTERN_PAGE_SIZE;
	uint64_t first = pages * cpu / witness_boot.p.nr_cpus;
	uint64_t last = pages * (cpu + 1) / witness_boot.p.nr_cpus;

	pattern_fill(ram, witness_boot.seed, first * PATTERN_PAGE_SIZE,
		     (last - first) * PATTERN_PAGE_SIZE);
}

static void witness_wait_all_filled(void)
{
	uint32_t n = witness_boot.p.nr_cpus, done;
	int said = 0;
	struct serial_line l;

	while ((done = __atomic_load_n(&witness_filled, __ATOMIC_ACQUIRE)) < n) {
		if (!said && witness_ms_since(witness_boot.fill_tsc) > WITNESS_LATE_CPUS_MS) {
			witness_line_boot(&l, "witness waiting");
			serial_line_str(&l, " cpus_ready=");
			serial_line_dec(&l, done);
			serial_line_str(&l, " of=");
			serial_line_dec(&l, n);
			serial_line_send(&l);
			said = 1;
		}
		x86_pause();
	}
}

static void witness_announce(void)
{
	struct serial_line l;

	witness_line_boot(&l, "witness start");
	serial_line_str(&l, " cpus=");
	serial_line_dec(&l, witness_boot.p.nr_cpus);
	serial_line_str(&l, " mem=");
	serial_line_dec(&l, witness_boot.p.ram_bytes >> 20);
	serial_line_str(&l, " fill_ms=");
	serial_line_dec(&l, witness_ms_since(witness_boot.fill_tsc));
	serial_line_str(&l, " id_from=");
	serial_line_str(&l, witness_boot.id_source == BOOT_ID_RDRAND ? "rdrand" : "rdtsc");
	serial_line_send(&l);
}

static void witness_verify(void)
{
	uint64_t t0 = x86_rdtsc();
	struct pattern_damage d;
	struct serial_line l;

	pattern_damage_init(&d);
	slots_verify(witness_boot.p.nr_cpus, witness_boot.seed, &d);
	pattern_verify(&witness_boot.p.ram, witness_boot.seed, &d);

	witness_line_boot(&l, "witness verify");
	if (d.bad_words == 0) {
		serial_line_str(&l, " result=ok pages=");
		serial_line_dec(&l, witness_boot.p.ram.bytes / PATTERN_PAGE_SIZE);
		serial_line_str(&l, " ms=");
		serial_line_dec(&l, witness_ms_since(t0));
	} else {
		serial_line_str(&l, " result=FAILED bad_words=");
		serial_line_dec(&l, d.bad_words);
		serial_line_str(&l, " first_bad=");
		serial_line_hex(&l, d.first_bad, 0);
	}
	/* The line first: whoever waits for the result finds it on the serial. */
	serial_line_send(&l);
	x86_outl(KVMLU_PORT_RESULT,
		 d.bad_words ? KVMLU_RESULT_VERIFY_FAILED : KVMLU_RESULT_VERIFY_OK);
}

static void witness_poll_requests(void)
{
	uint32_t req = x86_inl(KVMLU_PORT_REQUEST);
	struct serial_line l;

	if (req & KVMLU_REQ_VERIFY)
		witness_verify();
	if (req & ~KVMLU_REQ_VERIFY) {
		witness_line_boot(&l, "witness request");
		serial_line_str(&l, " ignored_bits=0x");
		serial_line_hex(&l, req & ~KVMLU_REQ_VERIFY, 0);
		serial_line_send(&l);
	}
}

/* The tick line's last field, read as the line goes out (serial.h says why). */
static void witness_uptime_end(struct serial_line *tail)
{
	uint64_t now = x86_rdtsc();

	/* Raw, never clamped to the last value: the tests check it goes forward. */
	serial_line_dec(tail, now > witness_boot.tsc0 ?
			(now - witness_boot.tsc0) / witness_boot.p.tsc_khz : 0);
}

static void witness_print_tick(unsigned int cpu)
{
	struct serial_line l;

	witness_line_boot(&l, "witness");
	serial_line_str(&l, " cpu=");
	serial_line_dec(&l, cpu);
	serial_line_str(&l, " tick=");
	serial_line_dec(&l, slots_ticks(cpu));
	serial_line_str(&l, " uptime_ms=");
	serial_line_send_ended(&l, witness_uptime_end);
}

static __attribute__((noreturn)) void witness_tick_loop(unsigned int cpu)
{
	uint64_t period = witness_boot.p.tsc_khz * 1000;
	uint64_t next = x86_rdtsc(), now;

	for (;;) {
		slots_run(cpu, witness_boot.seed, WITNESS_TICK_BATCH);
		now = x86_rdtsc();
		if ((int64_t)(now - next) < 0) {
			/* Far ahead means the TSC went backwards: restart the pace. */
			if ((int64_t)(next - now) <= (int64_t)(2 * period))
				continue;
			next = now;
		}
		witness_print_tick(cpu);
		if (cpu == 0)
			witness_poll_requests();
		/*
		 * Normally keep to the schedule, so lines stay a second apart
		 * on average. Late by more than half a second (the VM was
		 * paused): start a new schedule rather than print in a burst.
		 */
		if (now - next > period / 2)
			next = now + period;
		else
			next += period;
	}
}

void witness_main(uint64_t cpu, const struct kvmlu_boot_info *bi)
{
	struct serial_line l;

	if (cpu == 0)
		witness_boot_cpu0(bi);
	else
		witness_wait_go();

	if (cpu >= witness_boot.p.nr_cpus) {
		witness_line_boot(&l, "witness FATAL");
		serial_line_str(&l, " cpu=");
		serial_line_dec(&l, cpu);
		serial_line_str(&l, " beyond nr_vcpus=");
		serial_line_dec(&l, witness_boot.p.nr_cpus);
		serial_line_send(&l);
		cpu_halt_forever();
	}

	witness_fill_share(cpu);
	slots_init(cpu, witness_boot.seed);
	__atomic_add_fetch(&witness_filled, 1, __ATOMIC_RELEASE);

	if (cpu == 0) {
		witness_wait_all_filled();
		witness_announce();
		__atomic_store_n(&witness_started, 1, __ATOMIC_RELEASE);
	} else {
		/* So that the start line comes before any tick line. */
		while (!__atomic_load_n(&witness_started, __ATOMIC_ACQUIRE))
			x86_pause();
	}
	witness_tick_loop(cpu);
}

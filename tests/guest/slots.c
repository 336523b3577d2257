/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The moving part of the witness's memory: each vCPU owns a tick counter
 * and a page of SLOTS_PER_CPU slots. Tick t stores t in the counter, then
 * rewrites slot t % SLOTS_PER_CPU with
 *
 *	mix64(t ^ key),  key = seed + cpu * MIX_M1 + slot * MIX_M2
 *
 * Because mix64 is a bijection, the verifier decodes every slot back to
 * the tick t that wrote it, and the slot is good iff t % SLOTS_PER_CPU is
 * the slot's index and t is not ahead of the owner's counter (or t is
 * the slot's initial value, its own index). Any other bit pattern decodes
 * to an essentially random 64-bit t and fails.
 *
 * Why one word: an aligned 8-byte store is atomic, so a verifier reading
 * while the owner writes sees the old or the new value, both valid: a
 * concurrent update is never a false failure, and nobody waits. Why the
 * counter first: x86 keeps stores in order, so a reader that sees slot
 * value t and then reads the counter sees at least t.
 *
 * Lifecycle: initialised before the first tick, rewritten forever after,
 * all in guest RAM (the payload area's bss), so the ticks go on from
 * where they were after pause, restore or a host kexec.
 */
#include <stdint.h>

#include "layout.h"
#include "mix.h"
#include "slots.h"

_Static_assert((SLOTS_PER_CPU & (SLOTS_PER_CPU - 1)) == 0, "slot index is a mask");

struct slots_page {
	uint64_t slot[SLOTS_PER_CPU];
} __attribute__((aligned(4096)));

/* Own cache line each: the owner stores its counter on every tick. */
struct slots_counter {
	uint64_t ticks;
} __attribute__((aligned(64)));

static struct slots_page slots_pages[WITNESS_MAX_CPUS];
static struct slots_counter slots_counters[WITNESS_MAX_CPUS];

static inline uint64_t slots_key(uint64_t seed, unsigned int cpu, uint64_t slot)
{
	return seed + cpu * MIX_M1 + slot * MIX_M2;
}

static inline uint64_t slots_encode(uint64_t key, uint64_t tick)
{
	return mix64(tick ^ key);
}

void slots_init(unsigned int cpu, uint64_t seed)
{
	uint64_t s;

	__atomic_store_n(&slots_counters[cpu].ticks, 0, __ATOMIC_RELAXED);
	for (s = 0; s < SLOTS_PER_CPU; s++)
		__atomic_store_n(&slots_pages[cpu].slot[s],
				 slots_encode(slots_key(seed, cpu, s), s), __ATOMIC_RELEASE);
}

uint64_t slots_run(unsigned int cpu, uint64_t seed, uint64_t n)
{
	uint64_t *counter = &slots_counters[cpu].ticks;
	uint64_t *slot = slots_pages[cpu].slot;
	uint64_t t = __atomic_load_n(counter, __ATOMIC_RELAXED);
	uint64_t s;

	while (n--) {
		t++;
		s = t & (SLOTS_PER_CPU - 1);
		__atomic_store_n(counter, t, __ATOMIC_RELAXED);
		/* release: keeps the counter store before it (see the top) */
		__atomic_store_n(&slot[s], slots_encode(slots_key(seed, cpu, s), t),
				 __ATOMIC_RELEASE);
	}
	return t;
}

uint64_t slots_ticks(unsigned int cpu)
{
	return __atomic_load_n(&slots_counters[cpu].ticks, __ATOMIC_RELAXED);
}

void slots_verify(unsigned int nr_cpus, uint64_t seed, struct pattern_damage *d)
{
	unsigned int cpu;
	uint64_t s, w, t, ticks;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		for (s = 0; s < SLOTS_PER_CPU; s++) {
			w = __atomic_load_n(&slots_pages[cpu].slot[s], __ATOMIC_ACQUIRE);
			ticks = __atomic_load_n(&slots_counters[cpu].ticks, __ATOMIC_ACQUIRE);
			t = mix64_inverse(w) ^ slots_key(seed, cpu, s);
			if ((t & (SLOTS_PER_CPU - 1)) != s || (t > ticks && t != s))
				pattern_damage_add(d, (uint64_t)(uintptr_t)&slots_pages[cpu].slot[s]);
		}
	}
}

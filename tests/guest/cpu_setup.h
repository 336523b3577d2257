/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The witness's own descriptor tables and stacks (see cpu_setup.c).
 */
#ifndef WITNESS_CPU_SETUP_H
#define WITNESS_CPU_SETUP_H

#include <stdint.h>

#include "layout.h"

/* Frame the exception stubs in entry.S build on the CPL 0 stack. */
struct cpu_exception_frame {
	uint64_t vector;
	uint64_t error;		/* 0 for vectors without an error code */
	uint64_t rip;
	uint64_t cs;
	uint64_t rflags;
	uint64_t rsp;
	uint64_t ss;
};

extern uint8_t witness_kstacks[WITNESS_MAX_CPUS][WITNESS_KSTACK_SIZE];
extern uint8_t witness_ustacks[WITNESS_MAX_CPUS][WITNESS_USTACK_SIZE];

/* CPL 0, called by entry.S on the vCPU's kernel stack. */
void cpu_setup_cpl0(uint64_t cpu);

/*
 * CPL 3, once by vCPU 0 after the bss is cleared, before any other vCPU
 * runs C: the IDT and every TSS's I/O bitmap.
 */
void cpu_setup_build_tables(void);

/*
 * CPL 3: halt this vCPU for good. `int n` from CPL 3 raises #UD on this
 * machine's KVM, so there is no gate: entry.S executes `hlt`, which #GPs
 * at CPL 3, and witness_fatal() recognises that RIP and halts silently.
 */
__attribute__((noreturn)) void cpu_halt_forever(void);

#endif /* WITNESS_CPU_SETUP_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Descriptor tables and stacks of the witness guest, and the CPL 0 setup
 * of one vCPU.
 *
 * Lifecycle: every vCPU enters at KVMLU_PAYLOAD_ENTRY at CPL 0 on the
 * VMM's boot GDT; entry.S puts it on its own kernel stack and calls
 * cpu_setup_cpl0(), which loads this GDT, its TSS and the IDT, then
 * entry.S drops to CPL 3 for good. CPL 0 code is emulated ~2000x slower
 * here, so that function is kept to a few dozen instructions; the IDT
 * and the TSS I/O bitmaps are written later at CPL 3 (the VMM's page
 * tables map all RAM user-writable) by vCPU 0, before it lets the other
 * vCPUs run C. An exception before that would triple-fault, as it would
 * with no IDT.
 * After pause, save/restore or a host kexec nothing here is redone: the
 * tables live in guest RAM and the registers point at them.
 */
#include <stdint.h>

#include <kvmlu/payload_abi.h>

#include "cpu_setup.h"

/*
 * I/O permission bitmap: one bit per port, 0 = allowed. It covers ports
 * up to the kvmlu test port; every port past its end is refused, which
 * is what the witness wants for ports it does not use.
 */
#define CPU_IOMAP_PORTS (KVMLU_PORT_RESULT + 4)
#define CPU_IOMAP_BYTES ((CPU_IOMAP_PORTS + 7) / 8)

struct cpu_tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
	uint8_t iomap[CPU_IOMAP_BYTES];
	uint8_t iomap_end;	/* all ones: the CPU may read one byte past the map */
} __attribute__((packed, aligned(64)));

_Static_assert(__builtin_offsetof(struct cpu_tss, iomap) == 104, "64-bit TSS is 104 bytes");

struct cpu_idt_gate {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t reserved;
} __attribute__((packed));

struct cpu_table_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

/* Not zeroed by vCPU 0's bss clear: other vCPUs use them at that time. */
#define PERCPU __attribute__((section(".percpu"), aligned(4096)))

uint8_t witness_kstacks[WITNESS_MAX_CPUS][WITNESS_KSTACK_SIZE] PERCPU;
uint8_t witness_ustacks[WITNESS_MAX_CPUS][WITNESS_USTACK_SIZE] PERCPU;
static struct cpu_tss cpu_tss[WITNESS_MAX_CPUS] __attribute__((section(".percpu")));

/* In .data, not .bss: each vCPU writes its TSS descriptor while vCPU 0 clears the bss. */
static uint64_t cpu_gdt[WITNESS_GDT_ENTRIES] __attribute__((aligned(16))) = {
	[WITNESS_SEL_KCODE / 8] = 0x00af9a000000ffffULL,	/* 64-bit code, DPL 0 */
	[WITNESS_SEL_KDATA / 8] = 0x00cf92000000ffffULL,	/* data, DPL 0 */
	[WITNESS_SEL_UDATA / 8] = 0x00cff2000000ffffULL,	/* data, DPL 3 */
	[WITNESS_SEL_UCODE / 8] = 0x00affa000000ffffULL,	/* 64-bit code, DPL 3 */
};

static struct cpu_idt_gate cpu_idt[256] __attribute__((aligned(16)));

/* entry.S: exception stubs 0..31. */
extern const uint64_t witness_exception_stubs[WITNESS_NR_EXCEPTIONS];

static void cpu_gdt_set_tss(uint64_t cpu)
{
	uint64_t base = (uint64_t)(uintptr_t)&cpu_tss[cpu];
	/* Up to iomap_end, not the padding: a zero byte there would allow 8 ports. */
	uint64_t limit = __builtin_offsetof(struct cpu_tss, iomap_end);
	unsigned int idx = WITNESS_SEL_TSS0 / 8 + 2 * cpu;

	cpu_gdt[idx] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
		       (0x89ULL << 40) |	/* present, DPL 0, available 64-bit TSS */
		       (((limit >> 16) & 0xf) << 48) |
		       (((base >> 24) & 0xff) << 56);
	cpu_gdt[idx + 1] = base >> 32;
}

void cpu_setup_cpl0(uint64_t cpu)
{
	struct cpu_table_ptr gdt = { sizeof(cpu_gdt) - 1, (uint64_t)(uintptr_t)cpu_gdt };
	struct cpu_table_ptr idt = { sizeof(cpu_idt) - 1, (uint64_t)(uintptr_t)cpu_idt };
	struct cpu_tss *tss = &cpu_tss[cpu];

	/* Exceptions from CPL 3 switch to this stack. */
	tss->rsp[0] = (uint64_t)(uintptr_t)&witness_kstacks[cpu + 1][0];
	/* The map's bits are set later, at CPL 3, by cpu_setup_build_tables(). */
	tss->iomap_base = __builtin_offsetof(struct cpu_tss, iomap);
	cpu_gdt_set_tss(cpu);

	__asm__ volatile("lgdt %0" : : "m"(gdt) : "memory");
	/* Reload CS (same selector, new table) and the data segments. */
	__asm__ volatile("pushq %[cs]\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:\n\t"
			 "movl %[ds], %%eax\n\t"
			 "movl %%eax, %%ds\n\t"
			 "movl %%eax, %%es\n\t"
			 "movl %%eax, %%ss\n\t"
			 "xorl %%eax, %%eax\n\t"
			 "movl %%eax, %%fs\n\t"
			 "movl %%eax, %%gs"
			 :
			 : [cs] "i"(WITNESS_SEL_KCODE), [ds] "i"(WITNESS_SEL_KDATA)
			 : "rax", "memory");
	__asm__ volatile("ltr %w0" : : "r"(WITNESS_SEL_TSS0 + 16 * cpu) : "memory");
	__asm__ volatile("lidt %0" : : "m"(idt) : "memory");
}

static void cpu_idt_set(unsigned int vector, uint64_t handler)
{
	struct cpu_idt_gate *g = &cpu_idt[vector];

	g->offset_lo = handler & 0xffff;
	g->selector = WITNESS_SEL_KCODE;
	g->ist = 0;
	g->type_attr = 0x8e;	/* present, DPL 0, 64-bit interrupt gate */
	g->offset_mid = (handler >> 16) & 0xffff;
	g->offset_hi = handler >> 32;
	g->reserved = 0;
}

static void cpu_iomap_allow(struct cpu_tss *tss, unsigned int port, unsigned int n)
{
	for (; n; n--, port++)
		tss->iomap[port / 8] &= (uint8_t)~(1u << (port % 8));
}

void cpu_setup_build_tables(void)
{
	unsigned int v, cpu;

	/*
	 * IOPL 3 would be simpler, but this machine's KVM drops IOPL on the
	 * way to CPL 3 (seen: RFLAGS 0x10006 in a #GP on `out`), so CPL 3
	 * gets its ports from the TSS I/O bitmap. No vCPU does port I/O
	 * before vCPU 0 has built them all.
	 */
	for (cpu = 0; cpu < WITNESS_MAX_CPUS; cpu++) {
		struct cpu_tss *tss = &cpu_tss[cpu];

		__builtin_memset(tss->iomap, 0xff, sizeof(tss->iomap));
		tss->iomap_end = 0xff;
		cpu_iomap_allow(tss, KVMLU_COM1_BASE, 8);
		cpu_iomap_allow(tss, KVMLU_PORT_REQUEST, 4);
		cpu_iomap_allow(tss, KVMLU_PORT_RESULT, 4);
	}

	/*
	 * Only the exceptions get handlers. IF stays 0, so no external
	 * interrupt arrives; a stray vector hits a not-present gate and
	 * is reported as #NP (vector 11) with the IDT index in the error code.
	 */
	for (v = 0; v < WITNESS_NR_EXCEPTIONS; v++)
		cpu_idt_set(v, witness_exception_stubs[v]);
}

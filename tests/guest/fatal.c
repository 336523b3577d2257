/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report of an exception, which the witness never expects: entry.S's
 * stubs call witness_fatal() at CPL 0 on the vCPU's kernel stack, it
 * prints one `witness FATAL cpu=<n> vector=<v> rip=<hex> ...` line and
 * the vCPU halts for good (IF stays 0). It is also how a vCPU halts on
 * purpose (cpu_halt_forever()), silently. The other vCPUs keep running, so
 * the VM stays up for the tests to see the line and the verify results.
 */
#include <stdint.h>

#include "cpu_setup.h"
#include "serial.h"

__attribute__((noreturn)) void witness_fatal(const struct cpu_exception_frame *f);

void witness_fatal(const struct cpu_exception_frame *f)
{
	uintptr_t stack = (uintptr_t)f - (uintptr_t)witness_kstacks;
	struct serial_line l;
	uint64_t cr2;

	/* Not a fault: cpu_halt_forever() asking to stop this vCPU. */
	if (f->vector == 13 && (f->cs & 3) == 3 && f->rip == (uintptr_t)cpu_halt_forever)
		goto halt;

	__asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
	serial_line_init(&l);
	serial_line_str(&l, "witness FATAL cpu=");
	/* The kernel stack the CPU switched to tells which vCPU this is. */
	if (stack < sizeof(witness_kstacks))
		serial_line_dec(&l, stack / WITNESS_KSTACK_SIZE);
	else
		serial_line_str(&l, "unknown");
	serial_line_str(&l, " vector=");
	serial_line_dec(&l, f->vector);
	serial_line_str(&l, " rip=");
	serial_line_hex(&l, f->rip, 16);
	serial_line_str(&l, " error=");
	serial_line_hex(&l, f->error, 0);
	serial_line_str(&l, " cr2=");
	serial_line_hex(&l, cr2, 0);
	serial_line_str(&l, " rflags=");
	serial_line_hex(&l, f->rflags, 0);
	serial_line_str(&l, " cpl=");
	serial_line_dec(&l, f->cs & 3);
	serial_line_send_force(&l);
halt:
	for (;;)
		__asm__ volatile("cli; hlt" : : : "memory");
}

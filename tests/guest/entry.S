/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Entry of the witness guest and its CPL 0 stubs.
 *
 * The VMM starts every vCPU here (KVMLU_PAYLOAD_ENTRY) in 64-bit mode at
 * CPL 0 with RDI = vCPU index, RSI = boot info, RSP = 0 (payload_abi.h).
 * This code gives the vCPU its kernel stack, lets cpu_setup_cpl0() load
 * the witness's GDT/TSS/IDT, and irets to witness_main() at CPL 3 with
 * IOPL 3 and IF 0 on the vCPU's user stack. It never comes back to CPL 0
 * except through an exception (reported by witness_fatal(), then halt). Nothing here runs again after pause, restore or kexec.
 */
#include "layout.h"

	.section .text.entry, "ax"
	.code64
	.globl witness_entry
witness_entry:
	/* An index beyond our per-vCPU arrays: nothing safe to do but halt. */
	cmpq	$WITNESS_MAX_CPUS, %rdi
	jae	witness_halt_gate
	movq	%rdi, %rbx			/* callee-saved: vCPU index */
	movq	%rsi, %rbp			/* callee-saved: boot info */

	movq	%rdi, %rax
	addq	$1, %rax
	shlq	$WITNESS_KSTACK_SHIFT, %rax
	leaq	witness_kstacks(%rip), %rsp
	addq	%rax, %rsp			/* top of this vCPU's kernel stack */
	call	cpu_setup_cpl0

	movq	%rbx, %rax
	addq	$1, %rax
	shlq	$WITNESS_USTACK_SHIFT, %rax
	leaq	witness_ustacks(%rip), %rcx
	addq	%rax, %rcx			/* top of this vCPU's user stack */

	pushq	$(WITNESS_SEL_UDATA | 3)	/* SS */
	pushq	%rcx				/* RSP */
	pushq	$WITNESS_USER_RFLAGS		/* IOPL 3, IF 0 */
	pushq	$(WITNESS_SEL_UCODE | 3)	/* CS */
	leaq	witness_user_start(%rip), %rax
	pushq	%rax				/* RIP */
	movq	%rbx, %rdi
	movq	%rbp, %rsi
	iretq

	.text
witness_user_start:
	/* CPL 3 from here on; the call leaves RSP as the ABI expects. */
	call	witness_main
	ud2

	/* CPL 3: the #GP this raises is the request to halt (cpu_setup.h). */
	.globl cpu_halt_forever
cpu_halt_forever:
	hlt
	jmp	cpu_halt_forever

/*
 * Exception stubs: give every frame the same shape (vector, error code,
 * then what the CPU pushed), see struct cpu_exception_frame.
 */
.macro exception_stub vector, has_error
witness_exception_\vector:
	.if \has_error == 0
	pushq	$0
	.endif
	pushq	$\vector
	jmp	witness_exception_common
.endm

	exception_stub 0, 0
	exception_stub 1, 0
	exception_stub 2, 0
	exception_stub 3, 0
	exception_stub 4, 0
	exception_stub 5, 0
	exception_stub 6, 0
	exception_stub 7, 0
	exception_stub 8, 1
	exception_stub 9, 0
	exception_stub 10, 1
	exception_stub 11, 1
	exception_stub 12, 1
	exception_stub 13, 1
	exception_stub 14, 1
	exception_stub 15, 0
	exception_stub 16, 0
	exception_stub 17, 1
	exception_stub 18, 0
	exception_stub 19, 0
	exception_stub 20, 0
	exception_stub 21, 1
	exception_stub 22, 0
	exception_stub 23, 0
	exception_stub 24, 0
	exception_stub 25, 0
	exception_stub 26, 0
	exception_stub 27, 0
	exception_stub 28, 0
	exception_stub 29, 1
	exception_stub 30, 1
	exception_stub 31, 0

witness_exception_common:
	movq	%rsp, %rdi
	andq	$-16, %rsp
	call	witness_fatal
	/* witness_fatal() does not return; halt anyway if it ever does. */
witness_halt_gate:
	cli
1:	hlt
	jmp	1b

	.section .rodata
	.balign 8
	.globl witness_exception_stubs
witness_exception_stubs:
	.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.quad	witness_exception_\v
	.endr

	.section .note.GNU-stack, "", @progbits

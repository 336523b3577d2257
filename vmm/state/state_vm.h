/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The whole state of one paused VM, in memory: identity, memory map,
 * vCPUs, KVM devices, UART. It is what a state FDT holds
 * (docs/state-format.md) and what travels to a new kvmlu-vmm on upgrade
 * or across a kexec.
 *
 * Lifecycle: state_vm_init() with the vCPU count, filled by the capture
 * functions (or state_fdt_read()), checked by state_validate() before
 * anything of it reaches KVM, released by state_vm_free(). Guest RAM is
 * not in here: only where it is and which file holds it.
 */
#ifndef KVMLU_STATE_VM_H
#define KVMLU_STATE_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guestmem/digest_table.h"
#include "vmm/device.h"
#include "vmm/devices/uart8250.h"
#include "vmm/devices/virtio_blk_state.h"
#include "vmm/devices/virtio_net_state.h"
#include "vmm/state/cpu_state.h"
#include "vmm/state/vm_devices_state.h"

/*
 * Format versions of the state FDT (docs/state-format.md, Versioning).
 * A state without virtio devices is written as 1.1, which every kvmlu
 * since chunk digests reads. One with virtio devices is 2.0: a 1.x
 * reader would ignore the device nodes and give the guest a VM without
 * its disks, so it must refuse the state instead, and only a new major
 * makes it. One with a virtio-net NIC is 2.1: a 2.0 reader refuses it
 * anyway (it refuses every device node whose compatible it does not
 * know), and the minor says what it needs. This code reads all three.
 */
#define STATE_FORMAT_MAJOR	1
#define STATE_FORMAT_MINOR	1	/* 1.1: memory chunk-digests */
#define STATE_FORMAT_MAJOR_VIRTIO	2	/* 2.0: 1.1 + /devices/virtio-blk@... */
#define STATE_FORMAT_MINOR_VIRTIO	0
#define STATE_FORMAT_MINOR_NET		1	/* 2.1: 2.0 + /devices/virtio-net@... */
#define STATE_FORMAT_MINOR_PCI		2	/* 2.2: 2.1 + virtio-transport "pci", the pci nodes */
#define STATE_VIRTIO_TRANSPORT_MMIO	0
#define STATE_VIRTIO_TRANSPORT_PCI	1
#define STATE_FORMAT_MAJOR_MAX	2	/* the newest major this code reads */

#define STATE_MAX_VCPUS	256
#define STATE_MAX_REGIONS	8	/* GUESTMEM_MAX_REGIONS */
#define STATE_MAX_DEVICES	8	/* VM_VIRTIO_MAX_DEVICES, all types together */
#define STATE_NAME_MAX	64
#define STATE_UUID_LEN	36	/* 8-4-4-4-12 hex digits */
#define STATE_VERSION_MAX	32
/* 2 MiB chunks of the largest guest (GUESTMEM_MAX_RAM, 1 TiB): 8 MiB of digests. */
#define STATE_MAX_CHUNK_DIGESTS	(1u << 19)

enum state_backend {
	STATE_BACKEND_MEMFD = 0,	/* = GUESTMEM_MEMFD */
	STATE_BACKEND_GUEST_MEMFD = 1,	/* = GUESTMEM_GUEST_MEMFD */
};

struct state_vm_region {
	uint64_t gpa;
	uint64_t size;
	uint64_t file_offset;	/* where the region starts in its file */
	uint64_t token;		/* names the file: fd index on upgrade, LUO token after kexec */
	uint32_t slot;		/* KVM memslot id */
};

/* One device of a state: its type and its type's state struct (type->state_size bytes). */
struct state_device {
	const struct vm_device_type *type;
	union {
		uint64_t align;
		unsigned char bytes[VM_DEVICE_STATE_MAX];
	} state;
};

struct state_vm {
	char name[STATE_NAME_MAX + 1];
	char uuid[STATE_UUID_LEN + 1];
	char kvmlu_version[STATE_VERSION_MAX + 1];	/* of the writer */
	uint32_t format_major, format_minor;		/* of the FDT read */

	enum state_backend backend;
	uint32_t nr_regions;
	struct state_vm_region regions[STATE_MAX_REGIONS];
	bool has_checksum;		/* memory checksum taken at pause */
	uint64_t checksum_hi, checksum_lo;	/* XXH3-128 (guestmem_checksum) */
	/*
	 * Optional, with the checksum: the digest of each 2 MiB chunk it is
	 * made of (guestmem/digest_table.h), heap, nr_chunk_digests of them.
	 */
	uint64_t nr_chunk_digests;
	struct guestmem_chunk_digest *chunk_digests;

	uint32_t nr_vcpus;
	struct cpu_state *cpus;		/* nr_vcpus entries, heap */
	struct vm_devices_state devices;
	bool has_uart;
	struct uart8250_state uart;
	/*
	 * The virtio devices, all types in one list in slot order: grouped by
	 * type in the order of vm_device_types (a VM's disks, then its NICs),
	 * which state_vm_add_device() keeps. Each entry's state is its type's
	 * own struct, opaque here.
	 */
	uint32_t nr_devs;
	struct state_device devs[STATE_MAX_DEVICES];
	/*
	 * How they are reached (enum vm_virtio_transport): 0 virtio-mmio, 1
	 * virtio-pci (/devices "virtio-transport" = "pci", format 2.2; each
	 * device then has its pci node).
	 */
	uint32_t virtio_transport;
};

/* Zero s and allocate nr_vcpus zeroed vCPU states. */
int state_vm_init(struct state_vm *s, uint32_t nr_vcpus);
/* Safe on a zeroed struct and twice. */
void state_vm_free(struct state_vm *s);

/* A new random uuid (RFC 4122 version 4) in out. */
int state_uuid_generate(char out[STATE_UUID_LEN + 1]);

const char *state_backend_name(enum state_backend b);

/*
 * The format a writer gives s: 2.x with virtio devices, the minor the
 * newest of their types needs (2.1 with a NIC, 2.0 with only disks),
 * else 1.1.
 */
void state_format_of(const struct state_vm *s, uint32_t *major, uint32_t *minor);

/*
 * A new zeroed device of type t in s, placed after the devices of its
 * type and of the types before it (vm_device_types), so the list stays
 * in slot order whatever order the devices come in. NULL when s holds
 * STATE_MAX_DEVICES devices or t->max of type t, or t is not listed.
 */
void *state_vm_add_device(struct state_vm *s, const struct vm_device_type *t);

/* The i-th device of type t in s (its state struct), NULL if there are fewer. */
void *state_vm_device(const struct state_vm *s, const struct vm_device_type *t, uint32_t i);

/* Devices of type t in s. */
uint32_t state_vm_count(const struct state_vm *s, const struct vm_device_type *t);

/* Devices of every type in s. */
uint32_t state_vm_nr_devices(const struct state_vm *s);

#endif /* KVMLU_STATE_VM_H */

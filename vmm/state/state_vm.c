// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation, error text and small helpers of struct state_vm. The
 * struct is filled by capture (cpu_state.c, vm_devices_state.c and the
 * VMM's own memory map and UART) or by state_fdt_read.c, and only ever
 * reaches KVM after state_validate.c accepted it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "vmm/state/state_vm.h"

int state_vm_init(struct state_vm *s, uint32_t nr_vcpus)
{
	memset(s, 0, sizeof(*s));
	if (nr_vcpus == 0 || nr_vcpus > STATE_MAX_VCPUS)
		return -EINVAL;
	s->cpus = calloc(nr_vcpus, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	s->nr_vcpus = nr_vcpus;
	s->format_major = STATE_FORMAT_MAJOR;
	s->format_minor = STATE_FORMAT_MINOR;
	return 0;
}

void state_vm_free(struct state_vm *s)
{
	free(s->cpus);
	s->cpus = NULL;
	free(s->chunk_digests);
	s->chunk_digests = NULL;
	s->nr_chunk_digests = 0;
	s->nr_vcpus = 0;
}

int state_uuid_generate(char out[STATE_UUID_LEN + 1])
{
	uint8_t b[16];
	ssize_t n;

	n = getrandom(b, sizeof(b), 0);
	if (n != (ssize_t)sizeof(b))
		return n < 0 ? -errno : -EIO;
	b[6] = (b[6] & 0x0f) | 0x40;	/* version 4: random */
	b[8] = (b[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	snprintf(out, STATE_UUID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

const char *state_backend_name(enum state_backend b)
{
	switch (b) {
	case STATE_BACKEND_MEMFD:
		return "memfd";
	case STATE_BACKEND_GUEST_MEMFD:
		return "guest_memfd";
	}
	return "unknown";
}

/* Where t is in vm_device_types: the slot order of types. -1: not listed. */
static int type_rank(const struct vm_device_type *t)
{
	for (int k = 0; vm_device_types[k]; k++)
		if (vm_device_types[k] == t)
			return k;
	return -1;
}

void *state_vm_add_device(struct state_vm *s, const struct vm_device_type *t)
{
	int rank = type_rank(t);
	uint32_t at = 0;

	if (rank < 0 || s->nr_devs >= STATE_MAX_DEVICES || state_vm_count(s, t) >= t->max ||
	    t->state_size > VM_DEVICE_STATE_MAX)
		return NULL;
	while (at < s->nr_devs && type_rank(s->devs[at].type) <= rank)
		at++;
	memmove(&s->devs[at + 1], &s->devs[at], (s->nr_devs - at) * sizeof(s->devs[0]));
	memset(&s->devs[at], 0, sizeof(s->devs[at]));
	s->devs[at].type = t;
	s->nr_devs++;
	return s->devs[at].state.bytes;
}

void *state_vm_device(const struct state_vm *s, const struct vm_device_type *t, uint32_t i)
{
	for (uint32_t k = 0; k < s->nr_devs && k < STATE_MAX_DEVICES; k++)
		if (s->devs[k].type == t && i-- == 0)
			/* The caller's const: the codec reads through it, the reader fills it. */
			return (void *)s->devs[k].state.bytes;
	return NULL;
}

uint32_t state_vm_count(const struct state_vm *s, const struct vm_device_type *t)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < s->nr_devs && k < STATE_MAX_DEVICES; k++)
		n += s->devs[k].type == t;
	return n;
}

uint32_t state_vm_nr_devices(const struct state_vm *s)
{
	return s->nr_devs;
}

void state_format_of(const struct state_vm *s, uint32_t *major, uint32_t *minor)
{
	*major = STATE_FORMAT_MAJOR;
	*minor = STATE_FORMAT_MINOR;
	for (uint32_t k = 0; k < s->nr_devs && k < STATE_MAX_DEVICES; k++) {
		const struct vm_device_type *t = s->devs[k].type;

		if (*major != STATE_FORMAT_MAJOR_VIRTIO)
			*minor = STATE_FORMAT_MINOR_VIRTIO;
		*major = STATE_FORMAT_MAJOR_VIRTIO;
		if (t->format_minor > *minor)
			*minor = t->format_minor;
	}
	if (s->nr_devs && s->virtio_transport == STATE_VIRTIO_TRANSPORT_PCI &&
	    *minor < STATE_FORMAT_MINOR_PCI)
		*minor = STATE_FORMAT_MINOR_PCI;
}

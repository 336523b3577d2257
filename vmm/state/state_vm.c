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

#include "vmm/devices/virtio_blk_device.h"
#include "vmm/devices/virtio_net_device.h"
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

/* Where each device type's devices are in struct state_vm: one line per type. */
static const struct {
	const struct vm_device_type *type;
	size_t nr, at;
	uint32_t max;
} state_arrays[] = {
	{ &virtio_blk_type, offsetof(struct state_vm, nr_disks), offsetof(struct state_vm, disks),
	  STATE_MAX_DISKS },
	{ &virtio_net_type, offsetof(struct state_vm, nr_nets), offsetof(struct state_vm, nets),
	  STATE_MAX_NETS },
};

bool state_vm_devices(const struct state_vm *s, unsigned int k, struct state_devices *out)
{
	/* The caller's const: the codec reads through it, the reader fills it. */
	char *base = (char *)s;

	if (k >= sizeof(state_arrays) / sizeof(state_arrays[0]))
		return false;
	*out = (struct state_devices){
		.type = state_arrays[k].type, .nr = (uint32_t *)(base + state_arrays[k].nr),
		.at = base + state_arrays[k].at, .max = state_arrays[k].max,
	};
	return true;
}

uint32_t state_vm_nr_devices(const struct state_vm *s)
{
	struct state_devices d;
	uint32_t n = 0;

	for (unsigned int k = 0; state_vm_devices(s, k, &d); k++)
		n += *d.nr;
	return n;
}

void state_format_of(const struct state_vm *s, uint32_t *major, uint32_t *minor)
{
	struct state_devices d;

	*major = STATE_FORMAT_MAJOR;
	*minor = STATE_FORMAT_MINOR;
	for (unsigned int k = 0; state_vm_devices(s, k, &d); k++) {
		if (!*d.nr)
			continue;
		if (*major != STATE_FORMAT_MAJOR_VIRTIO)
			*minor = STATE_FORMAT_MINOR_VIRTIO;
		*major = STATE_FORMAT_MAJOR_VIRTIO;
		if (d.type->format_minor > *minor)
			*minor = d.type->format_minor;
	}
}

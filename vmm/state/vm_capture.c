// SPDX-License-Identifier: GPL-2.0
/*
 * struct vm <-> struct state_vm (see vm_capture.h). The VM's uuid is
 * made at the first capture of a process and kept from the state on
 * restore, so it names the same guest across any number of upgrades
 * and kexecs; struct vm (the VMM core) does not carry one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "kvmlu/version.h"
#include "vmm/devices/platform.h"
#include "vmm/state/vm_capture.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"

static pthread_mutex_t uuid_lock = PTHREAD_MUTEX_INITIALIZER;
static char vm_uuid[STATE_UUID_LEN + 1];

const char *state_vm_uuid(void)
{
	pthread_mutex_lock(&uuid_lock);
	if (!vm_uuid[0] && state_uuid_generate(vm_uuid))
		vm_uuid[0] = '\0';
	pthread_mutex_unlock(&uuid_lock);
	return vm_uuid;
}

void state_vm_uuid_set(const char *uuid)
{
	pthread_mutex_lock(&uuid_lock);
	snprintf(vm_uuid, sizeof(vm_uuid), "%s", uuid);
	pthread_mutex_unlock(&uuid_lock);
}

/* Each device into a new entry of the state's list, with its place in the layout. */
static int capture_devices(struct vm *vm, struct state_vm *s, char *err, size_t errlen)
{
	s->virtio_transport = vm->virtio.transport == VM_VIRTIO_TRANSPORT_PCI ?
			      STATE_VIRTIO_TRANSPORT_PCI : STATE_VIRTIO_TRANSPORT_MMIO;
	for (unsigned int k = 0; k < vm->virtio.nr_devs; k++) {
		struct vm_device *dev = vm->virtio.devs[k];
		struct vm_virtio_slot at = vm_virtio_slot(dev->slot);
		void *st = state_vm_add_device(s, dev->type);
		int ret;

		if (!st)
			return kvmlu_err(err, errlen, -E2BIG,
					 "capture: %s: the state holds %u %s, %u devices in all",
					 dev->name, dev->type->max, dev->type->whats, STATE_MAX_DEVICES);
		ret = dev->type->capture(dev, st, err, errlen);
		if (ret)
			return ret;
		*vm_device_state_slot(dev->type, st) = dev->slot;
		*vm_device_state_base(dev->type, st) = at.base;
		*vm_device_state_gsi(dev->type, st) = at.gsi;
	}
	return 0;
}

/* The same devices, type by type: as many as the VM has, in the same order. */
static int restore_devices(struct vm *vm, const struct state_vm *s, char *err, size_t errlen)
{
	bool pci = vm->virtio.transport == VM_VIRTIO_TRANSPORT_PCI;

	/* Each device's restore checks its own part again (virtio_mmio_set_state). */
	if (s->nr_devs && (s->virtio_transport == STATE_VIRTIO_TRANSPORT_PCI) != pci)
		return kvmlu_err(err, errlen, -EINVAL,
				 "restore: the state's virtio devices are on virtio-%s, the VM's on virtio-%s",
				 s->virtio_transport == STATE_VIRTIO_TRANSPORT_PCI ? "pci" : "mmio",
				 pci ? "pci" : "mmio");
	for (unsigned int k = 0; vm_device_types[k]; k++) {
		const struct vm_device_type *t = vm_device_types[k];
		uint32_t nr = state_vm_count(s, t);
		unsigned int have = vm_virtio_count(&vm->virtio, t);

		if (nr != have)
			return kvmlu_err(err, errlen, -EINVAL, "restore: the state has %u %s, the VM %u",
					 nr, t->whats, have);
		for (uint32_t i = 0; i < nr; i++) {
			struct vm_device *dev = vm_virtio_find(&vm->virtio, t, i);
			int ret = t->restore(dev, state_vm_device(s, t, i), err, errlen);

			if (ret)
				return ret;
		}
	}
	return 0;
}

int state_vm_capture(struct vm *vm, bool with_checksum, struct state_vm *s,
		     char *err, size_t errlen)
{
	int ret;

	ret = state_vm_init(s, vm->nr_vcpus);
	if (ret)
		return kvmlu_err(err, errlen, ret, "capture %s: %u vCPUs: %s", vm->name,
				 vm->nr_vcpus, strerror(-ret));
	snprintf(s->name, sizeof(s->name), "%s", vm->name);
	snprintf(s->uuid, sizeof(s->uuid), "%s", state_vm_uuid());
	snprintf(s->kvmlu_version, sizeof(s->kvmlu_version), "%s", KVMLU_VERSION);
	s->backend = vm->mem.backend == GUESTMEM_GUEST_MEMFD ? STATE_BACKEND_GUEST_MEMFD
							      : STATE_BACKEND_MEMFD;
	if (vm->mem.nr > STATE_MAX_REGIONS) {
		ret = kvmlu_err(err, errlen, -E2BIG, "capture %s: %u memory regions", vm->name,
				vm->mem.nr);
		goto err_free;
	}
	s->nr_regions = vm->mem.nr;
	for (unsigned int i = 0; i < vm->mem.nr; i++) {
		s->regions[i] = (struct state_vm_region){
			.gpa = vm->mem.r[i].gpa, .size = vm->mem.r[i].size,
			.file_offset = vm->mem.r[i].fd_offset, .token = i,
			.slot = vm->mem.r[i].slot,
		};
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		ret = cpu_state_capture(vm->kvm_fd, vm->vm_fd, vm->vcpus[i].fd, i, &s->cpus[i],
					err, errlen);
		if (ret)
			goto err_free;
	}
	ret = vm_devices_state_capture(vm->vm_fd, &s->devices, err, errlen);
	if (ret)
		goto err_free;
	uart8250_get_state(&vm->platform->uart, &s->uart);
	s->has_uart = true;
	ret = capture_devices(vm, s, err, errlen);
	if (ret)
		goto err_free;
	state_format_of(s, &s->format_major, &s->format_minor);
	/* Last, and only on request: it reads all of guest RAM. */
	if (with_checksum) {
		struct guestmem_checksum c;

		ret = guestmem_checksum(&vm->mem, 0, &c);
		if (ret) {
			kvmlu_err(err, errlen, ret, "capture %s: memory checksum: %s", vm->name,
				  strerror(-ret));
			goto err_free;
		}
		s->has_checksum = true;
		s->checksum_hi = c.hi;
		s->checksum_lo = c.lo;
	}
	return 0;
err_free:
	state_vm_free(s);
	return ret;
}

int state_vm_restore(struct vm *vm, const struct state_vm *s, char *err, size_t errlen)
{
	int ret;

	if (s->nr_vcpus != vm->nr_vcpus)
		return kvmlu_err(err, errlen, -EINVAL, "restore %s: state has %u vCPUs, VM %u",
				 vm->name, s->nr_vcpus, vm->nr_vcpus);
	if (s->nr_regions != vm->mem.nr)
		return kvmlu_err(err, errlen, -EINVAL, "restore %s: state has %u memory regions, VM %u",
				 vm->name, s->nr_regions, vm->mem.nr);
	for (unsigned int i = 0; i < s->nr_regions; i++)
		if (s->regions[i].gpa != vm->mem.r[i].gpa || s->regions[i].size != vm->mem.r[i].size)
			return kvmlu_err(err, errlen, -EINVAL,
					 "restore %s: region %u is gpa 0x%llx size 0x%llx in the state, 0x%llx/0x%llx in the VM",
					 vm->name, i, (unsigned long long)s->regions[i].gpa,
					 (unsigned long long)s->regions[i].size,
					 (unsigned long long)vm->mem.r[i].gpa,
					 (unsigned long long)vm->mem.r[i].size);
	/* vCPUs first: the irqchip state routes to LAPICs that must be set up. */
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		ret = cpu_state_restore(vm->vm_fd, vm->vcpus[i].fd, &s->cpus[i], err, errlen);
		if (ret)
			return ret;
	}
	ret = vm_devices_state_restore(vm->vm_fd, &s->devices, err, errlen);
	if (ret)
		return ret;
	if (s->has_uart) {
		ret = uart8250_set_state(&vm->platform->uart, &s->uart);
		if (ret)
			return kvmlu_err(err, errlen, ret, "restore %s: UART state: %s", vm->name,
					 strerror(-ret));
	}
	/* After the irqchip: a pending virtio interrupt is raised again into it. */
	ret = restore_devices(vm, s, err, errlen);
	if (ret)
		return ret;
	state_vm_uuid_set(s->uuid);
	return 0;
}

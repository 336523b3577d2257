// SPDX-License-Identifier: GPL-2.0
/*
 * The resume pipeline's plan and its build, apply and start steps (see
 * resume.h; the memory step is verify.c). Both a live upgrade and a
 * restore after a kexec go through these, in the order resume.h gives.
 *
 * Happy path: a plan filled by its mechanism -> resume_build() (the VM on
 * the plan's files) -> resume_verify() -> resume_apply() (TSC rate, vCPU
 * and device state, TSC offset) -> resume_start().
 *
 * Unhappy paths:
 *  1. A state that does not parse or validate: resume_plan_load_state()
 *     refuses it before anything is built from it or KVM sees it.
 *  2. resume_build() fails: no VM is left (vm_create() undoes itself, a
 *     failed link destroys the VM); the plan's fds are untouched, so a
 *     restore after a kexec may build again from the same files.
 *  3. resume_apply() or resume_start() fails: the VM stays built and no
 *     vCPU ran; the caller destroys it (or holds it, after a kexec).
 *  4. Memory found changed: resume_apply() and resume_start() refuse, so
 *     the guest never runs on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "kvmlu/control_wire.h"
#include "guestmem/gmem_link.h"
#include "vmm/device.h"
#include "vmm/resume/resume.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/vm_capture.h"
#include "vmm/vm.h"

void resume_plan_init(struct resume_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->serial_fd = -1;
	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++)
		p->ram_fds[i] = -1;
	for (unsigned int i = 0; i < RESUME_MAX_DEVICES; i++)
		p->devs[i].fd = -1;
	p->run = true;
}

void resume_report_init(struct resume_report *r)
{
	memset(r, 0, sizeof(*r));
}

const char *resume_memory_name(enum resume_memory m)
{
	return m == RESUME_MEMORY_SHARED ? "shared" : m == RESUME_MEMORY_LINKED ? "linked" : "copied";
}

void resume_report_steps(const struct resume_report *r, json_object *o)
{
	json_object *steps = json_object_new_object();

	json_object_object_add(steps, KVMLU_KEY_STEP_BUILD_NS, json_line_new_u64(r->build_ns));
	json_object_object_add(steps, KVMLU_KEY_STEP_VERIFY_NS, json_line_new_u64(r->verify_ns));
	json_object_object_add(steps, KVMLU_KEY_STEP_APPLY_NS, json_line_new_u64(r->apply_ns));
	json_object_object_add(steps, KVMLU_KEY_STEP_START_NS, json_line_new_u64(r->start_ns));
	json_object_object_add(o, KVMLU_KEY_STEPS, steps);
}

void resume_plan_free(struct resume_plan *p)
{
	state_vm_free(&p->state);
	p->have_state = false;
}

int resume_plan_load_state(struct resume_plan *p, const void *blob, size_t size,
			   uint32_t expect_vcpus, char *err, size_t errlen)
{
	int ret;

	resume_plan_free(p);
	ret = state_fdt_load(blob, size, expect_vcpus, &p->state, err, errlen);
	if (ret)
		return ret;
	p->have_state = true;
	return 0;
}

int resume_plan_check_tokens(const struct resume_plan *p, char *err, size_t errlen)
{
	const struct state_vm *s = &p->state;

	for (uint32_t i = 0; i < s->nr_regions; i++)
		if (s->regions[i].token != p->ram_token_base + i || s->regions[i].file_offset)
			return kvmlu_err(err, errlen, -EINVAL,
					 "region %u names token 0x%llx offset 0x%llx, expected token 0x%llx offset 0",
					 i, (unsigned long long)s->regions[i].token,
					 (unsigned long long)s->regions[i].file_offset,
					 (unsigned long long)(p->ram_token_base + i));
	return 0;
}

void resume_plan_from_state(struct resume_plan *p)
{
	const struct state_vm *s = &p->state;

	snprintf(p->name, sizeof(p->name), "%s", s->name);
	p->ram_size = 0;
	for (uint32_t i = 0; i < s->nr_regions; i++)
		p->ram_size += s->regions[i].size;
	p->nr_vcpus = s->nr_vcpus;
	p->backend = s->backend == STATE_BACKEND_GUEST_MEMFD ? GUESTMEM_GUEST_MEMFD : GUESTMEM_MEMFD;
	/*
	 * Fds do not cross a kexec: each device's type makes its config to
	 * open it again from its state (a disk by the path recorded at pause,
	 * a tap by its name), in the state's order, the slot order.
	 */
	p->nr_devs = 0;
	for (uint32_t k = 0; k < s->nr_devs && k < RESUME_MAX_DEVICES; k++) {
		struct vm_device_config *c = &p->devs[p->nr_devs++];

		memset(c, 0, sizeof(*c));
		c->type = s->devs[k].type;
		c->fd = -1;
		c->type->reopen(s->devs[k].state.bytes, c);
	}
	p->transport = s->virtio_transport == STATE_VIRTIO_TRANSPORT_PCI ? VM_VIRTIO_TRANSPORT_PCI
									  : VM_VIRTIO_TRANSPORT_MMIO;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* memfd: the VM adopts duplicates; the plan's fds stay for another build. */
static int build_memfd(const struct resume_plan *p, struct vm *vm, struct vm_config *cfg,
		       char *err, size_t errlen)
{
	int dups[GUESTMEM_MAX_REGIONS];
	int ret;

	if (p->nr_ram < 1)
		return kvmlu_err(err, errlen, -EINVAL, "%s: no RAM files", p->name);
	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++)
		dups[i] = -1;
	for (uint32_t i = 0; i < p->nr_ram; i++) {
		dups[i] = fcntl(p->ram_fds[i], F_DUPFD_CLOEXEC, 0);
		if (dups[i] < 0) {
			ret = kvmlu_err(err, errlen, -errno, "%s: dup RAM file %u: %s",
					p->name, i, strerror(errno));
			goto err_close;
		}
	}
	cfg->adopt_fds = dups;
	ret = vm_create(vm, cfg, err, errlen);
	/*
	 * The VM owns the duplicates on success. A failed vm_create() may
	 * have closed them; closing them again here could hit fds reused
	 * since, so they are only closed where it did not get that far: the
	 * plan's originals keep the files either way.
	 */
	if (!ret)
		return 0;
	for (uint32_t i = 0; i < p->nr_ram; i++)
		if (fcntl(dups[i], F_GETFD) >= 0 && same_file(dups[i], p->ram_fds[i]))
			close(dups[i]);
	return ret;
err_close:
	for (uint32_t i = 0; i < p->nr_ram; i++)
		if (dups[i] >= 0)
			close(dups[i]);
	return ret;
}

/*
 * guest_memfd: a file belongs to the VM that made it and no memslot of
 * another takes it. Build the VM on fresh files, then link the plan's
 * memory in their place (KVM_LINK_GUEST_MEMFD, the project's kernel
 * patch): same pages, no copy. Where the kernel cannot link and the plan
 * allows a copy, the fresh files stay, to be filled in resume_verify().
 * The plan's fds stay its own either way; the links hold the memory.
 */
static int build_guest_memfd(const struct resume_plan *p, struct vm *vm, struct vm_config *cfg,
			     struct resume_report *r, char *err, size_t errlen)
{
	char msg[512] = "";
	int ret;

	ret = vm_create(vm, cfg, err, errlen);
	if (ret)
		return ret;
	if (p->ram_copy_ok) {
		ret = guestmem_gmem_can_link(vm->vm_fd, msg, sizeof(msg));
		if (ret < 0) {
			kvmlu_err(err, errlen, ret, "%s", msg);
			goto err_vm;
		}
		if (!ret) {
			r->memory = RESUME_MEMORY_COPY;
			return 0;
		}
	}
	if (p->nr_ram != vm->mem.nr) {
		ret = kvmlu_err(err, errlen, -EINVAL, "%s: %u RAM files for %u regions",
				p->name, p->nr_ram, vm->mem.nr);
		goto err_vm;
	}
	ret = guestmem_gmem_relink(&vm->mem, vm->vm_fd, p->ram_fds, msg, sizeof(msg));
	if (ret) {
		kvmlu_err(err, errlen, ret, "%s: link the guest_memfd RAM: %s", p->name, msg);
		goto err_vm;
	}
	r->memory = RESUME_MEMORY_LINKED;
	return 0;
err_vm:
	vm_destroy(vm);
	return ret;
}

int resume_build(const struct resume_plan *p, struct vm *vm, struct resume_report *r,
		 char *err, size_t errlen)
{
	struct vm_config cfg = {
		.name = p->name,
		.ram_size = p->ram_size,
		.nr_vcpus = p->nr_vcpus,
		.backend = p->backend,
		.serial_fd = p->serial_fd,
		.devs = p->devs,
		.nr_devs = p->nr_devs,
		.transport = p->transport,
	};
	uint64_t t0 = kvmlu_mono_ns();
	int ret;

	/* The VM takes dups of the devices' fds: the plan's stay the filler's. */
	r->memory = RESUME_MEMORY_SHARED;
	if (p->backend == GUESTMEM_GUEST_MEMFD)
		ret = build_guest_memfd(p, vm, &cfg, r, err, errlen);
	else
		ret = build_memfd(p, vm, &cfg, err, errlen);
	r->build_ns = kvmlu_mono_ns() - t0;
	return ret;
}

/*
 * The order inside, and why: the TSC rate before state_vm_restore(),
 * since a state saved by a VMM before vm_set_tsc_rate() carries KVM's
 * early-calibration rate, which this KVM may refuse, and
 * cpu_state_restore() must not ask for it again; the TSC offset after
 * it, since it is computed from the clock that state_vm_restore() set
 * (KVM_SET_CLOCK) and replaces the offset cpu_state_restore() wrote.
 * state_vm_restore() has its own order (vCPUs, then the VM-wide
 * irqchip, PIT and clock, then the devices; vmm/state/vm_capture.c).
 * All of it after the memory step: nothing of a state reaches KVM for a
 * VM whose memory differs from the pause.
 */
int resume_apply(struct resume_plan *p, struct vm *vm, struct resume_report *r,
		 char *err, size_t errlen)
{
	uint64_t t0 = kvmlu_mono_ns();
	int ret;

	if (!p->have_state)
		return kvmlu_err(err, errlen, -EINVAL, "%s: no state to apply", vm->name);
	if (!resume_memory_ok(r))
		return kvmlu_err(err, errlen, -EIO, "%s: memory differs from the pause: state not applied",
				 vm->name);
	ret = resume_tsc_rate_fit(vm, &p->state, &r->tsc_khz_saved, &r->tsc_khz_now, err, errlen);
	if (!ret)
		ret = state_vm_restore(vm, &p->state, err, errlen);
	if (!ret && p->new_boot)
		ret = resume_tsc_adjust(vm, &p->state, &r->tsc_shift, &r->tsc_adjusted, err, errlen);
	r->apply_ns = kvmlu_mono_ns() - t0;
	return ret;
}

int resume_start(const struct resume_plan *p, struct vm *vm, struct resume_report *r,
		 char *err, size_t errlen)
{
	uint64_t t0 = kvmlu_mono_ns();
	int ret;

	/* The last guard: no vCPU of a VM on changed memory ever runs. */
	if (!resume_memory_ok(r))
		return kvmlu_err(err, errlen, -EIO, "%s: memory differs from the pause: not started",
				 vm->name);
	ret = p->run ? vm_start(vm, err, errlen) : vm_start_paused(vm, err, errlen);
	r->start_ns = kvmlu_mono_ns() - t0;
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A VM back after a host kexec, from the LUO session its VMM held at the
 * kexec (live_update.h). Two steps, so that a failure in the second can
 * be retried without losing the first:
 *
 * live_update_restore_take(): retrieve the session (once per boot: after
 *   this the process holds the only copy of the VM).
 * live_update_restore_take_files(): the state memfd (token 1), kept as a
 *   blob and checked by state_fdt_load(), the same parse and validation as
 *   live upgrade -> the RAM files by the tokens the state names. Each file
 *   can be retrieved once, so what was got is kept and a retry asks only
 *   for the rest. Nothing of it reaches KVM yet.
 *
 * live_update_restore_build(): a VM from what was taken -> vm_create()
 *   on the RAM files (memfd: the VM adopts duplicates, so the taken fds
 *   stay for a retry; guest_memfd: a VM on fresh files, then the
 *   retrieved memory linked in their place with KVM_LINK_GUEST_MEMFD,
 *   guestmem/gmem_link.h) -> memory checksum now == checksum recorded at
 *   pause, or (lazy, the default where the kernel allows) RAM registered
 *   so that each chunk is verified before its first access while the
 *   guest runs (lazy_restore.c) -> state_vm_restore() -> TSC offsets
 *   moved onto this boot's TSC.
 *   Disks (virtio-blk) are reopened by the path the state recorded and
 *   must be the same files (device, inode, size): another disk, or none,
 *   fails the build and the VM is held with that reason. Taps
 *   (virtio-net) are made again by name, up, on the recorded bridge, with
 *   the recorded MAC; a tap that cannot be made holds the VM likewise.
 *   Every failure destroys the VM it built and leaves the taken files as
 *   they were: the caller holds the VM and may build again.
 *
 * restore_main.c drives both and holds the VM, paused and
 * reachable, when anything after the take fails (hold.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "guestmem/digest_table.h"
#include "guestmem/gmem_link.h"
#include "guestmem/guestmem.h"
#include "vmm/live_update/live_update.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_memfd.h"
#include "vmm/state/vm_capture.h"
#include "vmm/vm.h"

/* Parse and check the taken state blob; s is state_vm_free()'d by the caller. */
static int restore_parse_state(const struct live_update_restore *lu, struct state_vm *s,
			       char *err, size_t errlen)
{
	char msg[512] = "";
	int ret;

	/* Every check before KVM sees any of it, as on live upgrade. */
	ret = state_fdt_load(lu->state_blob, lu->state_size, 0, s, msg, sizeof(msg));
	if (ret)
		return kvmlu_err(err, errlen, ret, "session '%s': state refused: %s",
				 lu->session.name, msg);
	if (strcmp(s->name, lu->vm_name))
		return kvmlu_err(err, errlen, -EINVAL,
				 "session '%s' holds the state of VM '%s', not '%s'",
				 lu->session.name, s->name, lu->vm_name);
	if (s->backend != STATE_BACKEND_MEMFD && s->backend != STATE_BACKEND_GUEST_MEMFD)
		return kvmlu_err(err, errlen, -EOPNOTSUPP,
				 "session '%s': %s backend cannot be restored by this VMM",
				 lu->session.name, state_backend_name(s->backend));
	for (uint32_t i = 0; i < s->nr_regions; i++)
		if (s->regions[i].token != LUO_TOKEN_RAM(i) || s->regions[i].file_offset)
			return kvmlu_err(err, errlen, -EINVAL,
					 "session '%s': region %u names token 0x%llx offset 0x%llx, expected token 0x%llx offset 0",
					 lu->session.name, i,
					 (unsigned long long)s->regions[i].token,
					 (unsigned long long)s->regions[i].file_offset,
					 (unsigned long long)LUO_TOKEN_RAM(i));
	return 0;
}

void live_update_restore_init(struct live_update_restore *lu)
{
	memset(lu, 0, sizeof(*lu));
	luo_session_init(&lu->session);
	lu->state_fd = -1;
	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++)
		lu->ram_fds[i] = -1;
}

int live_update_restore_take(const char *session_name, struct live_update_restore *lu,
			     char *err, size_t errlen)
{
	const char *vm_name;

	lu->started_wall_ns = kvmlu_wall_ns();
	vm_name = luo_session_vm_name(session_name);
	if (!vm_name) {
		luo_session_name_check(session_name, err, errlen);
		return -EINVAL;
	}
	snprintf(lu->vm_name, sizeof(lu->vm_name), "%s", vm_name);
	return luo_session_retrieve(&lu->session, session_name, err, errlen);
}

bool live_update_restore_have_files(const struct live_update_restore *lu)
{
	if (!lu->state_blob || !lu->nr_ram)
		return false;
	for (uint32_t i = 0; i < lu->nr_ram; i++)
		if (lu->ram_fds[i] < 0)
			return false;
	return true;
}

int live_update_restore_take_files(struct live_update_restore *lu, char *err, size_t errlen)
{
	struct state_vm s = { 0 };
	char msg[512] = "", what[32];
	uint64_t t0;
	int ret;

	/* Each file can be retrieved once: what was got is kept for a retry. */
	if (lu->state_fd < 0 && !lu->state_blob) {
		ret = luo_session_retrieve_fd(&lu->session, LUO_TOKEN_STATE, "state memfd",
					      &lu->state_fd, err, errlen);
		if (ret)
			return ret;
	}
	if (!lu->state_blob) {
		ret = state_memfd_read(lu->state_fd, STATE_FDT_MAX_SIZE, &lu->state_blob,
				       &lu->state_size, msg, sizeof(msg));
		if (ret)
			return kvmlu_err(err, errlen, ret, "session '%s': %s", lu->session.name, msg);
		close(lu->state_fd);
		lu->state_fd = -1;
	}
	ret = restore_parse_state(lu, &s, err, errlen);
	if (ret)
		goto out;
	lu->paused_wall_ns = s.devices.clock_wall_ns;
	lu->state_bytes = lu->state_size;
	lu->nr_ram = s.nr_regions;
	t0 = kvmlu_mono_ns();
	for (uint32_t i = 0; i < s.nr_regions; i++) {
		if (lu->ram_fds[i] >= 0)
			continue;
		snprintf(what, sizeof(what), "RAM region %u", i);
		ret = luo_session_retrieve_fd(&lu->session, LUO_TOKEN_RAM(i), what,
					      &lu->ram_fds[i], err, errlen);
		if (ret)
			goto out;
	}
	lu->retrieve_ns += kvmlu_mono_ns() - t0;
out:
	state_vm_free(&s);
	return ret;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* memfd: the VM adopts duplicates; the taken fds stay for another build. */
static int restore_vm_memfd(struct vm *vm, struct vm_config *cfg,
			    const struct live_update_restore *lu, char *err, size_t errlen)
{
	int dups[GUESTMEM_MAX_REGIONS];
	int ret;

	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++)
		dups[i] = -1;
	for (uint32_t i = 0; i < lu->nr_ram; i++) {
		dups[i] = fcntl(lu->ram_fds[i], F_DUPFD_CLOEXEC, 0);
		if (dups[i] < 0) {
			ret = kvmlu_err(err, errlen, -errno, "restore %s: dup RAM file %u: %s",
					cfg->name, i, strerror(errno));
			goto err_close;
		}
	}
	cfg->adopt_fds = dups;
	ret = vm_create(vm, cfg, err, errlen);
	/*
	 * The VM owns the duplicates on success. A failed vm_create() may
	 * have closed them; closing them again here could hit fds reused
	 * since, so they are only closed where it did not get that far: the
	 * taken originals keep the files either way.
	 */
	if (!ret)
		return 0;
	for (uint32_t i = 0; i < lu->nr_ram; i++)
		if (fcntl(dups[i], F_GETFD) >= 0 && same_file(dups[i], lu->ram_fds[i]))
			close(dups[i]);
	return ret;
err_close:
	for (uint32_t i = 0; i < lu->nr_ram; i++)
		if (dups[i] >= 0)
			close(dups[i]);
	return ret;
}

/*
 * guest_memfd: a retrieved file belongs to no VM and no memslot takes it.
 * Build the VM on fresh files, then link the retrieved memory in their
 * place (KVM_LINK_GUEST_MEMFD, the project's kernel patch): same pages, no
 * copy. The retrieved fds stay ours either way; the links hold the memory.
 */
static int restore_vm_guest_memfd(struct vm *vm, const struct vm_config *cfg,
				  const struct live_update_restore *lu, char *err, size_t errlen)
{
	char msg[512] = "";
	int ret;

	ret = vm_create(vm, cfg, err, errlen);
	if (ret)
		return ret;
	ret = guestmem_gmem_relink(&vm->mem, vm->vm_fd, lu->ram_fds, msg, sizeof(msg));
	if (ret) {
		vm_destroy(vm);
		return kvmlu_err(err, errlen, ret, "restore %s: guest_memfd RAM: %s", cfg->name, msg);
	}
	return 0;
}

/*
 * The checksum of the RAM now against the one recorded at pause, through
 * a digest table, so that when the state carries the pause's chunk
 * digests a mismatch names the chunks that changed.
 */
static int restore_verify(struct vm *vm, const struct state_vm *s,
			  struct live_update_restore *lu, char *err, size_t errlen)
{
	struct guestmem_checksum c = { 0 };
	struct guestmem_digest_table t;
	uint64_t t0 = kvmlu_mono_ns();
	int ret;

	lu->has_recorded = s->has_checksum;
	lu->chunks_differ = 0;
	if (s->has_checksum) {
		c.hi = s->checksum_hi;
		c.lo = s->checksum_lo;
		guestmem_checksum_format(&c, lu->checksum_recorded);
	}
	ret = guestmem_digest_table_init(&t, &vm->mem);
	if (!ret)
		ret = guestmem_digest_table_refresh(&t, 0, NULL, NULL);
	if (!ret)
		ret = guestmem_digest_table_sum(&t, &c.hi, &c.lo);
	if (ret) {
		guestmem_digest_table_free(&t);
		return kvmlu_err(err, errlen, ret, "restore %s: memory checksum: %s",
				 vm->name, strerror(-ret));
	}
	guestmem_checksum_format(&c, lu->checksum_now);
	lu->checksum_ns = kvmlu_mono_ns() - t0;
	lu->memory_verified = s->has_checksum && c.hi == s->checksum_hi && c.lo == s->checksum_lo;
	/* state_validate() checked the count against the same regions. */
	if (!lu->memory_verified && s->nr_chunk_digests == t.nr_chunks) {
		for (uint64_t i = t.nr_chunks; i-- > 0;) {
			if (t.digest[i].hi == s->chunk_digests[i].hi &&
			    t.digest[i].lo == s->chunk_digests[i].lo)
				continue;
			lu->chunks_differ++;
			lu->first_differ_chunk = i;
		}
	}
	lu->nr_chunks = t.nr_chunks;
	guestmem_digest_table_free(&t);
	return 0;
}

/*
 * Lazy when asked and possible: the guest resumes first and each chunk is
 * verified on its first touch (lazy_restore.c). Otherwise, or when the
 * kernel or the state cannot, all of it now, before the guest runs.
 */
static int restore_verify_choose(struct vm *vm, const struct state_vm *s,
				 struct live_update_restore *lu, char *err, size_t errlen)
{
	struct guestmem_checksum c = { 0 };
	char why[256] = "";
	int ret;

	lu->lazy = false;
	lu->verified_wall_ns = 0;
	lu->verify_fallback[0] = '\0';
	if (!lu->want_lazy) {
		snprintf(why, sizeof(why), "sync verification asked for");
	} else if (vm->mem.backend == GUESTMEM_GUEST_MEMFD) {
		/* KVM maps guest_memfd pages from the file, not through our mapping. */
		snprintf(why, sizeof(why), "guest_memfd RAM is not faulted in through a userspace mapping");
	} else {
		lu->has_recorded = s->has_checksum;
		c.hi = s->checksum_hi;
		c.lo = s->checksum_lo;
		guestmem_checksum_format(&c, lu->checksum_recorded);
		lu->checksum_now[0] = '\0';
		ret = live_update_lazy_start(vm, s, lu, why, sizeof(why));
		if (!ret) {
			snprintf(lu->verify_mode, sizeof(lu->verify_mode), "lazy");
			fprintf(stderr, "kvmlu-vmm: restore %s: memory verified lazily: the guest resumes now, each 2 MiB chunk is verified before its first access\n",
				vm->name);
			return 0;
		}
	}
	snprintf(lu->verify_fallback, sizeof(lu->verify_fallback), "%s", why);
	snprintf(lu->verify_mode, sizeof(lu->verify_mode), "sync");
	fprintf(stderr, "kvmlu-vmm: restore %s: lazy verification not used (%s): verifying all RAM before the guest runs\n",
		vm->name, why);
	ret = restore_verify(vm, s, lu, err, errlen);
	if (!ret) {
		snprintf(lu->verification, sizeof(lu->verification), "%s",
			 lu->memory_verified ? "verified" : "mismatch");
		lu->verified_wall_ns = kvmlu_wall_ns();
	}
	return ret;
}

int live_update_restore_build(struct live_update_restore *lu, int serial_fd, struct vm *vm,
			      char *err, size_t errlen)
{
	struct virtio_blk_spec disks[STATE_MAX_DISKS];
	struct virtio_net_spec nets[STATE_MAX_NETS];
	struct vm_config cfg = { 0 };
	struct state_vm s = { 0 };
	uint64_t ram = 0, t0;
	int ret;

	lu->memory_verified = false;
	ret = restore_parse_state(lu, &s, err, errlen);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < s.nr_regions; i++)
		ram += s.regions[i].size;
	cfg.name = s.name;
	cfg.ram_size = ram;
	cfg.nr_vcpus = s.nr_vcpus;
	cfg.serial_fd = serial_fd;
	/*
	 * Disk fds do not cross a kexec: reopen each by the path recorded at
	 * pause. state_vm_restore() then refuses a disk that is not the one
	 * recorded (device, inode, size), and the VM is held, not run on it.
	 */
	for (uint32_t i = 0; i < s.nr_disks; i++) {
		disks[i] = (struct virtio_blk_spec){ .path = s.disks[i].ident.path,
						     .readonly = s.disks[i].readonly };
		snprintf(disks[i].id, sizeof(disks[i].id), "%s", s.disks[i].id);
	}
	cfg.disks = disks;
	cfg.nr_disks = s.nr_disks;
	/*
	 * Nor do tap fds, and a tap we created went with its fd: make it
	 * again by the recorded name, on the recorded bridge, and give the
	 * guest the recorded MAC. A tap that cannot be made fails the build,
	 * and the VM is held with the reason (tap_open() names it).
	 */
	for (uint32_t i = 0; i < s.nr_nets; i++)
		virtio_net_state_spec(&s.nets[i], &nets[i]);
	cfg.nets = nets;
	cfg.nr_nets = s.nr_nets;
	t0 = kvmlu_mono_ns();
	if (s.backend == STATE_BACKEND_GUEST_MEMFD) {
		cfg.backend = GUESTMEM_GUEST_MEMFD;
		ret = restore_vm_guest_memfd(vm, &cfg, lu, err, errlen);
	} else {
		cfg.backend = GUESTMEM_MEMFD;
		ret = restore_vm_memfd(vm, &cfg, lu, err, errlen);
	}
	if (ret)
		goto out;
	lu->vm_create_ns = kvmlu_mono_ns() - t0;
	t0 = kvmlu_mono_ns();
	ret = restore_verify_choose(vm, &s, lu, err, errlen);
	lu->verify_start_ns = kvmlu_mono_ns() - t0;
	/* A VM on changed memory stays built for inspection but never runs. */
	if (ret || (!lu->lazy && !lu->memory_verified))
		goto out_vm;
	t0 = kvmlu_mono_ns();
	ret = live_update_tsc_rate_fit(vm, &s, &lu->tsc_khz_saved, &lu->tsc_khz_now, err, errlen);
	if (!ret)
		ret = state_vm_restore(vm, &s, err, errlen);
	if (!ret)
		ret = live_update_tsc_adjust(vm, &s, &lu->tsc_shift, &lu->tsc_adjusted, err, errlen);
	lu->state_restore_ns = kvmlu_mono_ns() - t0;
	if (!ret)
		lu->restored_wall_ns = kvmlu_wall_ns();
out_vm:
	if (ret) {
		/* No vCPU ran: the verifier can let go before the mapping goes. */
		live_update_lazy_stop(lu);
		vm_destroy(vm);
	}
out:
	state_vm_free(&s);
	return ret;
}

int live_update_restore_finish(struct live_update_restore *lu, char *err, size_t errlen)
{
	int ret;

	if (!lu->resumed_wall_ns)
		lu->resumed_wall_ns = kvmlu_wall_ns();
	ret = luo_session_finish(&lu->session, err, errlen);
	live_update_restore_publish(lu);
	return ret;
}

void live_update_restore_release(struct live_update_restore *lu)
{
	for (unsigned int i = 0; i < GUESTMEM_MAX_REGIONS; i++) {
		if (lu->ram_fds[i] >= 0)
			close(lu->ram_fds[i]);
		lu->ram_fds[i] = -1;
	}
	if (lu->state_fd >= 0)
		close(lu->state_fd);
	lu->state_fd = -1;
	free(lu->state_blob);
	lu->state_blob = NULL;
	luo_session_close(&lu->session);
}

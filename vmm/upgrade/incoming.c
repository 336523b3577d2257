// SPDX-License-Identifier: GPL-2.0
/*
 * `kvmlu-vmm incoming --fd N` (see incoming.h): the receiving half of a
 * live upgrade (vmm/upgrade/upgrade.c has the other half and the whole story).
 *
 * Happy path: receive "prepare" and build a VM with that vCPU count and
 * RAM size while the old process still runs the guest, adopting the
 * memfd RAM files as they are (guest_memfd: the old VM's memory linked
 * into this VM with KVM_LINK_GUEST_MEMFD where the kernel has the kvmlu
 * patch, else fresh files of this VM) and its disks on the old process's
 * open files (never reopened by path); say "ready". Then receive the
 * state (the guest is paused now), read and validate it (before KVM sees
 * any of it) and check it describes the VM we built; guest_memfd without
 * the link: fill the new files from the old ones;
 * compare the memory checksum if the state has one; fit the TSC rate
 * (vmm/live_update/tsc.c); restore vCPUs and devices; say "restored" and
 * wait. Nothing has run the guest here yet, and nothing does unless the
 * old process answers "commit": that message is the one commit point of
 * the hand-over (docs/control-protocol.md has the drawing). On commit:
 * serve the inherited control socket, start the vCPUs (parked, if the
 * state says the VM was paused), say "resumed", then run the VM like
 * `kvmlu-vmm run` until it stops.
 *
 * Unhappy paths before commit (an error, or anything but "commit" on the
 * socket, EOF included: the old process timed out or died): say "error"
 * with the reason if we can and exit 1 without ever having run a vCPU;
 * the old process still has the VM. Nothing here touches the old VM: it
 * is only read (guest_memfd copy). After commit a failure to start is a
 * lost VM: said as "error" with "lost":true, and the old process reports
 * it (it never resumes its stale copy).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/json_line.h"
#include "guestmem/gmem_link.h"
#include "vmm/control/server.h"
#include "vmm/live_update/live_update.h"
#include "vmm/state/state_fdt.h"
#include "vmm/state/state_memfd.h"
#include "vmm/state/vm_capture.h"
#include "vmm/upgrade/incoming.h"
#include "vmm/upgrade/upgrade_wire.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/vm_virtio.h"
#include "vmm/control/vmm_process.h"

struct handoff {
	int fds[UPGRADE_WIRE_MAX_FDS];
	unsigned int nfds;
	char name[VM_NAME_MAX + 1];
	uint64_t ram_size;
	unsigned int nr_vcpus;
	enum guestmem_backend backend;
	int serial_fd, listen_fd;
	int region_fd[GUESTMEM_MAX_REGIONS];
	unsigned int nr_region_fds;
	char control_path[108];
	unsigned int verify_timeout_ms;
	bool linked;		/* guest_memfd: the old memory itself, nothing to copy */
	/* virtio-blk disks, slot order: the old process's open files, not paths to reopen. */
	unsigned int nr_disks;
	int disk_fd[VM_VIRTIO_MAX_DEVICES];
	struct virtio_blk_spec disk[VM_VIRTIO_MAX_DEVICES];
	struct virtio_blk_identity disk_ident[VM_VIRTIO_MAX_DEVICES];
	/* virtio-net NICs, slot order after the disks: the old process's taps. */
	unsigned int nr_nets;
	int net_fd[VM_VIRTIO_MAX_DEVICES];
	struct virtio_net_spec net[VM_VIRTIO_MAX_DEVICES];
};

/* fd index from the handoff object; -1 if absent, -EPROTO if bad. */
static int fd_at(const struct handoff *h, json_object *o, const char *key, bool required)
{
	json_object *v;
	int64_t i;

	if (!json_object_object_get_ex(o, key, &v))
		return required ? -EPROTO : -1;
	i = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || i < 0 || i >= (int64_t)h->nfds)
		return -EPROTO;
	return h->fds[i];
}

static bool get_u64_field(json_object *o, const char *key, uint64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return false;
	*out = (uint64_t)json_object_get_int64(v);
	return true;
}

/* "disks": what each was opened as, its identity, and its fd. Absent: none. */
static int parse_disks(json_object *o, struct handoff *h, char *err, size_t errlen)
{
	json_object *arr, *d, *v;
	size_t n;

	if (!json_object_object_get_ex(o, "disks", &arr))
		return 0;
	if (!json_object_is_type(arr, json_type_array) ||
	    (n = json_object_array_length(arr)) > VM_VIRTIO_MAX_DEVICES)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad disks");
	for (size_t i = 0; i < n; i++) {
		struct virtio_blk_identity *id = &h->disk_ident[i];
		struct virtio_blk_spec *sp = &h->disk[i];
		const char *str;

		d = json_object_array_get_idx(arr, i);
		h->disk_fd[i] = fd_at(h, d, "fd", true);
		if (!json_object_is_type(d, json_type_object) || h->disk_fd[i] < 0)
			return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %zu: bad fd", i);
		if (!json_object_object_get_ex(d, "path", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    (str = json_object_get_string(v))[0] != '/' || strlen(str) >= sizeof(id->path))
			return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %zu: bad path", i);
		snprintf(id->path, sizeof(id->path), "%s", str);
		sp->path = id->path;
		if (!json_object_object_get_ex(d, "readonly", &v) ||
		    !json_object_is_type(v, json_type_boolean))
			return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %zu: bad readonly", i);
		sp->readonly = json_object_get_boolean(v);
		if (!json_object_object_get_ex(d, "id", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    strlen(json_object_get_string(v)) > VIRTIO_BLK_ID_MAX)
			return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %zu: bad id", i);
		snprintf(sp->id, sizeof(sp->id), "%s", json_object_get_string(v));
		if (!get_u64_field(d, "dev", &id->dev) || !get_u64_field(d, "ino", &id->ino) ||
		    !get_u64_field(d, "size", &id->size))
			return kvmlu_err(err, errlen, -EPROTO, "prepare: disk %zu: bad identity", i);
	}
	h->nr_disks = (unsigned int)n;
	return 0;
}

/* An interface name from a handoff object ("" allowed only if optional). */
static bool get_ifname(json_object *o, const char *key, bool optional, char out[IFNAMSIZ])
{
	json_object *v;
	const char *str;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return false;
	str = json_object_get_string(v);
	if (!(optional && !str[0]) && !tap_name_valid(str))
		return false;
	memcpy(out, str, strlen(str) + 1);	/* valid: < IFNAMSIZ */
	return true;
}

/* "nets": each NIC's tap, bridge, MAC and tap fd. Absent: none. */
static int parse_nets(json_object *o, struct handoff *h, char *err, size_t errlen)
{
	json_object *arr, *d, *v;
	size_t n;

	if (!json_object_object_get_ex(o, "nets", &arr))
		return 0;
	if (!json_object_is_type(arr, json_type_array) ||
	    (n = json_object_array_length(arr)) + h->nr_disks > VM_VIRTIO_MAX_DEVICES)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad nets");
	for (size_t i = 0; i < n; i++) {
		struct virtio_net_spec *sp = &h->net[i];

		d = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(d, json_type_object) ||
		    (h->net_fd[i] = fd_at(h, d, "fd", true)) < 0)
			return kvmlu_err(err, errlen, -EPROTO, "prepare: NIC %zu: bad fd", i);
		memset(sp, 0, sizeof(*sp));
		if (!get_ifname(d, "tap", false, sp->tap) || !get_ifname(d, "bridge", true, sp->bridge))
			return kvmlu_err(err, errlen, -EPROTO, "prepare: NIC %zu: bad tap or bridge", i);
		if (!json_object_object_get_ex(d, "mac", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    !virtio_net_mac_parse(json_object_get_string(v), sp->mac))
			return kvmlu_err(err, errlen, -EPROTO, "prepare: NIC %zu: bad mac", i);
		sp->has_mac = true;
	}
	h->nr_nets = (unsigned int)n;
	return 0;
}

static int parse_prepare(json_object *o, struct handoff *h, char *err, size_t errlen)
{
	json_object *v, *arr;
	size_t n;

	json_object_object_get_ex(o, "msg", &v);
	if (strcmp(json_object_get_string(v), "prepare"))
		return kvmlu_err(err, errlen, -EPROTO, "expected prepare, got \"%.40s\"",
				 json_object_get_string(v));
	if (!json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) > VM_NAME_MAX)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad name");
	snprintf(h->name, sizeof(h->name), "%s", json_object_get_string(v));
	if (!json_object_object_get_ex(o, "ram_size", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) <= 0)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad ram_size");
	h->ram_size = (uint64_t)json_object_get_int64(v);
	if (!json_object_object_get_ex(o, "nr_vcpus", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) < 1 || json_object_get_int(v) > VM_MAX_VCPUS)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad nr_vcpus");
	h->nr_vcpus = (unsigned int)json_object_get_int(v);
	if (!json_object_object_get_ex(o, "backend", &v) || !json_object_is_type(v, json_type_string) ||
	    guestmem_backend_parse(json_object_get_string(v), &h->backend))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad backend");
	h->serial_fd = fd_at(h, o, "serial_fd", true);
	h->listen_fd = fd_at(h, o, "listen_fd", false);
	if (h->serial_fd < 0 || h->listen_fd < -1)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: bad serial/listen fd index");
	if (h->listen_fd >= 0) {
		if (!json_object_object_get_ex(o, "control_path", &v) ||
		    !json_object_is_type(v, json_type_string) ||
		    strlen(json_object_get_string(v)) >= sizeof(h->control_path))
			return kvmlu_err(err, errlen, -EPROTO, "prepare: listen_fd without control_path");
		snprintf(h->control_path, sizeof(h->control_path), "%s", json_object_get_string(v));
	}
	if (!json_object_object_get_ex(o, "region_fds", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return kvmlu_err(err, errlen, -EPROTO, "prepare: no region_fds");
	n = json_object_array_length(arr);
	if (n == 0 || n > GUESTMEM_MAX_REGIONS)
		return kvmlu_err(err, errlen, -EPROTO, "prepare: %zu region fds", n);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		int64_t k = json_object_get_int64(e);

		if (!json_object_is_type(e, json_type_int) || k < 0 || k >= (int64_t)h->nfds)
			return kvmlu_err(err, errlen, -EPROTO, "prepare: bad region fd index");
		h->region_fd[i] = h->fds[k];
	}
	h->nr_region_fds = (unsigned int)n;
	h->verify_timeout_ms = 10000;
	if (json_object_object_get_ex(o, "verify_timeout_ms", &v) && json_object_get_int(v) > 0)
		h->verify_timeout_ms = (unsigned int)json_object_get_int(v);
	if (parse_disks(o, h, err, errlen))
		return -EPROTO;
	return parse_nets(o, h, err, errlen);
}

/* The state must describe the VM built from "prepare": token i is region i. */
static int state_matches_vm(const struct state_vm *s, const struct vm *vm,
			    const struct handoff *h, char *err, size_t errlen)
{
	if (s->backend != (h->backend == GUESTMEM_GUEST_MEMFD ? STATE_BACKEND_GUEST_MEMFD
							      : STATE_BACKEND_MEMFD))
		return kvmlu_err(err, errlen, -EINVAL, "state backend %s, VM %s",
				 state_backend_name(s->backend), guestmem_backend_name(h->backend));
	if (s->nr_regions != vm->mem.nr)
		return kvmlu_err(err, errlen, -EINVAL, "state has %u memory regions, VM %u",
				 s->nr_regions, vm->mem.nr);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		if (s->regions[i].token != i || s->regions[i].token >= h->nr_region_fds)
			return kvmlu_err(err, errlen, -EINVAL,
					 "state region %u names file %llu, not the %u passed", i,
					 (unsigned long long)s->regions[i].token, h->nr_region_fds);
		if (s->regions[i].gpa != vm->mem.r[i].gpa || s->regions[i].size != vm->mem.r[i].size ||
		    s->regions[i].file_offset != vm->mem.r[i].fd_offset)
			return kvmlu_err(err, errlen, -EINVAL,
					 "state region %u (gpa 0x%llx size 0x%llx) is not the VM's (gpa 0x%llx size 0x%llx)",
					 i, (unsigned long long)s->regions[i].gpa,
					 (unsigned long long)s->regions[i].size,
					 (unsigned long long)vm->mem.r[i].gpa,
					 (unsigned long long)vm->mem.r[i].size);
	}
	return 0;
}

/*
 * guest_memfd on a kernel that cannot link: the old files are bound to
 * the old VM; fill this VM's fresh ones from them. The old VM is paused,
 * so the copy is stable.
 */
static int copy_guest_memfd(struct vm *vm, const struct state_vm *s, const int *old_fds,
			    uint64_t *copied, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		size_t len = (size_t)s->regions[i].size;
		void *src = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, old_fds[i],
				 (off_t)s->regions[i].file_offset);

		if (src == MAP_FAILED)
			return kvmlu_err(err, errlen, -errno, "mmap old guest_memfd region %u: %s",
					 i, strerror(errno));
		/*
		 * Fault the destination in one call rather than one page fault
		 * per 4 KiB inside memcpy (each is slow on these hosts); if the
		 * kernel cannot, memcpy faults them in anyway.
		 */
		(void)madvise(vm->mem.r[i].hva, len, MADV_POPULATE_WRITE);
		memcpy(vm->mem.r[i].hva, src, len);
		munmap(src, len);
		*copied += len;
	}
	return 0;
}

/*
 * guest_memfd, while the old VM still runs: where the kernel can link, this
 * VM's fresh files are swapped for the old VM's memory (like memfd: the
 * pages both VMs map are the same, nothing is copied). Without the link
 * the copy at restore stays; a link the kernel offers but refuses is an
 * error (the old process keeps the VM).
 */
static int link_guest_memfd(struct handoff *h, struct vm *vm, char *err, size_t errlen)
{
	char msg[512] = "";
	int ret;

	ret = guestmem_gmem_can_link(vm->vm_fd, msg, sizeof(msg));
	if (ret < 0)
		return kvmlu_err(err, errlen, ret, "%s", msg);
	if (ret == 0)
		return 0;
	if (h->nr_region_fds != vm->mem.nr)
		return kvmlu_err(err, errlen, -EINVAL, "prepare: %u RAM files for %u regions",
				 h->nr_region_fds, vm->mem.nr);
	ret = guestmem_gmem_relink(&vm->mem, vm->vm_fd, h->region_fd, msg, sizeof(msg));
	if (ret)
		return kvmlu_err(err, errlen, ret, "link the old VM's guest_memfd: %s", msg);
	h->linked = true;
	return 0;
}

static int check_checksum(struct vm *vm, const struct state_vm *s, char *err, size_t errlen)
{
	struct guestmem_checksum c;
	int ret;

	if (!s->has_checksum)
		return 0;
	ret = guestmem_checksum(&vm->mem, 0, &c);
	if (ret)
		return kvmlu_err(err, errlen, ret, "memory checksum: %s", strerror(-ret));
	if (c.hi != s->checksum_hi || c.lo != s->checksum_lo)
		return kvmlu_err(err, errlen, -EIO,
				 "memory checksum %016llx%016llx differs from %016llx%016llx taken at pause",
				 (unsigned long long)c.hi, (unsigned long long)c.lo,
				 (unsigned long long)s->checksum_hi,
				 (unsigned long long)s->checksum_lo);
	return 0;
}

/* lost: after commit, when the old process cannot take the VM back. */
static void send_error(int sock, const char *desc, bool lost)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "msg", json_object_new_string("error"));
	json_object_object_add(o, "desc", json_object_new_string(desc));
	json_object_object_add(o, "lost", json_object_new_boolean(lost));
	(void)upgrade_wire_send(sock, o, NULL, 0, NULL, 0);
}

static void send_simple(int sock, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "msg", json_object_new_string(msg));
	(void)upgrade_wire_send(sock, o, NULL, 0, NULL, 0);
}

/* Step 1, guest still running in the old process: build the VM. */
static int incoming_prepare(int sock, struct handoff *h, struct vm *vm, double *create_ms,
			    char *err, size_t errlen)
{
	struct vm_config cfg = { 0 };
	uint64_t t0;
	json_object *o;
	int ret;

	ret = upgrade_wire_recv(sock, &o, h->fds, UPGRADE_WIRE_MAX_FDS, &h->nfds, err, errlen);
	if (ret)
		return ret;
	ret = parse_prepare(o, h, err, errlen);
	json_object_put(o);
	if (ret)
		return ret;
	cfg.name = h->name;
	cfg.ram_size = h->ram_size;
	cfg.nr_vcpus = h->nr_vcpus;
	cfg.backend = h->backend;
	cfg.serial_fd = h->serial_fd;
	/* The VM takes dups of the disk fds; ours are closed on the way out. */
	cfg.disks = h->disk;
	cfg.nr_disks = h->nr_disks;
	cfg.adopt_disk_fds = h->disk_fd;
	cfg.adopt_disk_idents = h->disk_ident;
	/* The same for the taps: the interface is not made again. */
	cfg.nets = h->net;
	cfg.nr_nets = h->nr_nets;
	cfg.adopt_net_fds = h->net_fd;
	/*
	 * memfd: the very same files, nothing copied. vm_create() owns them
	 * on success; forget them in h->fds so they are not closed twice.
	 */
	if (cfg.backend == GUESTMEM_MEMFD) {
		if (h->nr_region_fds < 1)
			return kvmlu_err(err, errlen, -EINVAL, "prepare: no RAM files");
		cfg.adopt_fds = h->region_fd;
	}
	t0 = kvmlu_mono_ns();
	ret = vm_create(vm, &cfg, err, errlen);
	if (ret)
		return ret;
	*create_ms = (double)(kvmlu_mono_ns() - t0) / 1e6;
	if (cfg.backend == GUESTMEM_GUEST_MEMFD) {
		ret = link_guest_memfd(h, vm, err, errlen);
		if (ret)
			return ret;
	}
	if (cfg.backend == GUESTMEM_MEMFD)
		for (unsigned int i = 0; i < h->nfds; i++)
			for (unsigned int j = 0; j < vm->mem.nr; j++)
				if (h->fds[i] == h->region_fd[j])
					h->fds[i] = -1;
	return 0;
}

/* Step 2, guest paused in the old process: state in, VM restored; no vCPU runs yet. */
static int incoming_restore(int sock, struct handoff *h, struct vm *vm, struct state_vm *s,
			    bool *run, uint64_t *copied, char *err, size_t errlen)
{
	int fds[UPGRADE_WIRE_MAX_FDS], state_fd;
	unsigned int nfds = 0;
	uint32_t saved_khz, now_khz;
	json_object *o, *v;
	void *blob = NULL;
	size_t size;
	int ret;

	ret = upgrade_wire_recv(sock, &o, fds, UPGRADE_WIRE_MAX_FDS, &nfds, err, errlen);
	if (ret)
		return ret;
	json_object_object_get_ex(o, "msg", &v);
	if (strcmp(json_object_get_string(v), "state") || nfds != 1)
		ret = kvmlu_err(err, errlen, -EPROTO, "expected state with 1 fd, got \"%.40s\" with %u",
				json_object_get_string(v), nfds);
	/* Whether the guest ran in the old process: a paused VM stays paused. */
	else if (!json_object_object_get_ex(o, "run", &v) ||
		 !json_object_is_type(v, json_type_boolean))
		ret = kvmlu_err(err, errlen, -EPROTO, "state without \"run\": true or false");
	else
		*run = json_object_get_boolean(v);
	json_object_put(o);
	state_fd = nfds ? fds[0] : -1;
	for (unsigned int i = 1; i < nfds; i++)
		close(fds[i]);
	if (!ret)
		ret = state_memfd_read(state_fd, STATE_FDT_MAX_SIZE, &blob, &size,
				       err, errlen);
	if (state_fd >= 0)
		close(state_fd);
	if (ret)
		return ret;
	/* All checks before KVM sees any of it. */
	ret = state_fdt_load(blob, size, vm->nr_vcpus, s, err, errlen);
	free(blob);
	if (ret)
		return ret;
	ret = state_matches_vm(s, vm, h, err, errlen);
	if (ret)
		return ret;
	if (h->backend == GUESTMEM_GUEST_MEMFD && !h->linked) {
		ret = copy_guest_memfd(vm, s, h->region_fd, copied, err, errlen);
		if (ret)
			return ret;
	}
	ret = check_checksum(vm, s, err, errlen);
	if (ret)
		return ret;
	/*
	 * Before state_vm_restore(): a state saved by a VMM before
	 * vm_set_tsc_rate() carries KVM's early-calibration TSC rate, which
	 * this KVM may refuse; the vCPUs keep a rate KVM runs them at.
	 */
	ret = live_update_tsc_rate_fit(vm, s, &saved_khz, &now_khz, err, errlen);
	if (ret)
		return ret;
	if (saved_khz != now_khz)
		fprintf(stderr, "kvmlu-vmm incoming: %s: guest TSC rate %u kHz in the state, %u kHz now\n",
			vm->name, saved_khz, now_khz);
	return state_vm_restore(vm, s, err, errlen);
}

/* Wait for the old process's word; 0 on "commit", anything else refuses. */
static int incoming_wait_commit(int sock, char *err, size_t errlen)
{
	int fds[UPGRADE_WIRE_MAX_FDS];
	unsigned int nfds = 0;
	json_object *o, *v;
	int ret;

	ret = upgrade_wire_recv(sock, &o, fds, UPGRADE_WIRE_MAX_FDS, &nfds, err, errlen);
	if (ret == -ECONNRESET)
		return kvmlu_err(err, errlen, ret, "the old kvmlu-vmm went away before commit");
	if (ret)
		return ret;
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	json_object_object_get_ex(o, "msg", &v);
	if (strcmp(json_object_get_string(v), "commit"))
		ret = kvmlu_err(err, errlen, -EPROTO, "expected commit, got \"%.40s\"",
				json_object_get_string(v));
	json_object_put(o);
	return ret;
}

/* After commit: the VM is ours. Serve the control socket, start the vCPUs. */
static int incoming_commit(struct handoff *h, struct vm *vm, bool run,
			   struct control_server *server, struct control_ctx *ctx,
			   char *err, size_t errlen)
{
	int ret;

	ctx->vm = vm;
	ctx->listen_fd = -1;
	ctx->verify_timeout_ms = h->verify_timeout_ms;
	if (h->listen_fd >= 0) {
		ret = control_server_adopt(server, h->listen_fd, h->control_path, ctx, err, errlen);
		if (ret)
			return ret;
		for (unsigned int i = 0; i < h->nfds; i++)
			if (h->fds[i] == h->listen_fd)
				h->fds[i] = -1;
		ctx->listen_fd = h->listen_fd;
		ctx->control_path = h->control_path;
	}
	return run ? vm_start(vm, err, errlen) : vm_start_paused(vm, err, errlen);
}

int vmm_incoming_main(int argc, char **argv)
{
	struct control_server server;
	struct control_ctx ctx = { 0 };
	struct handoff h = { .nfds = 0 };
	struct state_vm s = { 0 };
	struct vm vm;
	char err[512] = "", *end;
	uint64_t t0, copied = 0;
	double prepare_ms = 0, create_ms = 0;
	bool run = true, committed = false;
	int sock, sig_fd, ret, status = 1;
	long fd;

	memset(&vm, 0, sizeof(vm));
	vm.kvm_fd = vm.vm_fd = vm.stop_efd = -1;
	control_server_init(&server);
	if (argc != 4 || strcmp(argv[2], "--fd")) {
		fprintf(stderr, "kvmlu-vmm incoming: internal subcommand, usage: incoming --fd N\n");
		return 64;
	}
	errno = 0;
	fd = strtol(argv[3], &end, 10);
	if (errno || *end || fd < 0 || fd > 1024) {
		fprintf(stderr, "kvmlu-vmm incoming: --fd %s: not a file descriptor\n", argv[3]);
		return 64;
	}
	sock = (int)fd;
	sig_fd = vmm_signals_setup();
	if (sig_fd < 0) {
		fprintf(stderr, "kvmlu-vmm incoming: signal setup: %s\n", strerror(errno));
		return 1;
	}
	t0 = kvmlu_mono_ns();
	ret = incoming_prepare(sock, &h, &vm, &create_ms, err, sizeof(err));
	if (!ret) {
		prepare_ms = (double)(kvmlu_mono_ns() - t0) / 1e6;
		send_simple(sock, "ready");
		t0 = kvmlu_mono_ns();
		ret = incoming_restore(sock, &h, &vm, &s, &run, &copied, err, sizeof(err));
	}
	if (!ret) {
		send_simple(sock, "restored");
		ret = incoming_wait_commit(sock, err, sizeof(err));
	}
	if (!ret) {
		committed = true;
		ret = incoming_commit(&h, &vm, run, &server, &ctx, err, sizeof(err));
	}
	if (ret) {
		fprintf(stderr, "kvmlu-vmm incoming: %s: %s%s\n", h.name[0] ? h.name : "upgrade",
			committed ? "VM lost after commit: " : "", err);
		send_error(sock, err, committed);
		/* The socket path stays the old process's: do not remove it on the way out. */
		ctx.handed_off = true;
		goto out;
	}
	{
		json_object *o = json_object_new_object();

		json_object_object_add(o, "msg", json_object_new_string("resumed"));
		json_object_object_add(o, "memory_copied_bytes", json_line_new_u64(copied));
		json_object_object_add(o, "memory", json_object_new_string(
			h.backend == GUESTMEM_MEMFD ? "shared" : h.linked ? "linked" : "copied"));
		/* From "ready" on: includes the old side's pause, capture and commit. */
		json_object_object_add(o, "restore_ms",
				       json_line_new_ms((double)(kvmlu_mono_ns() - t0) / 1e6));
		json_object_object_add(o, "prepare_ms", json_line_new_ms(prepare_ms));
		/* vm_create() alone: KVM_CREATE_VM, irqchip, memslots, vCPUs. */
		json_object_object_add(o, "create_ms", json_line_new_ms(create_ms));
		/* The VM is ours now whatever the old process does with this. */
		(void)upgrade_wire_send(sock, o, NULL, 0, NULL, 0);
	}
	close(sock);
	sock = -1;
	fprintf(stderr, "kvmlu-vmm: %s: %s after live upgrade (pid %d, %llu bytes copied%s)\n",
		vm.name, run ? "resumed" : "taken over paused", (int)getpid(),
		(unsigned long long)copied, h.linked ? ", guest_memfd linked" : "");
	status = vmm_serve(&vm, sig_fd, &server);
out:
	if (vm.nr_threads || vm.state == VM_STATE_RUNNING) {
		vm_request_stop(&vm, VM_STOP_VMM_ERROR, "upgrade failed");
		vm_join(&vm);
	}
	control_server_stop(&server);
	vm_destroy(&vm);
	state_vm_free(&s);
	for (unsigned int i = 0; i < h.nfds; i++)
		if (h.fds[i] >= 0)
			close(h.fds[i]);
	if (sock >= 0)
		close(sock);
	close(sig_fd);
	return status;
}

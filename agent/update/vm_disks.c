// SPDX-License-Identifier: GPL-2.0
/*
 * Can each disk of a VM be found again after the kexec (see vm_disks.h)?
 * The VMM reports path, st_dev and st_ino of the file it has open; the
 * agent runs on the same host, so a stat() of the path must give the
 * same pair, and the filesystem must be one that survives a reboot. A
 * block device is reported as st_rdev and inode 0, and compared so.
 */
#include <errno.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "agent/update/vm_disks.h"
#include "common/err.h"
#include "kvmlu/control_wire.h"

static int get_u64(json_object *o, const char *key, uint64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return -EPROTO;
	*out = (uint64_t)json_object_get_int64(v);
	return 0;
}

static int check_one(json_object *d, size_t i, char *why, size_t whylen)
{
	uint64_t dev, ino;
	const char *path;
	struct statfs sf;
	struct stat st;
	json_object *v;

	if (!json_object_is_type(d, json_type_object) ||
	    !json_object_object_get_ex(d, KVMLU_KEY_PATH, &v) || !json_object_is_type(v, json_type_string) ||
	    (path = json_object_get_string(v))[0] != '/' || get_u64(d, KVMLU_KEY_DEV, &dev) ||
	    get_u64(d, KVMLU_KEY_INO, &ino))
		return kvmlu_err(why, whylen, -EPROTO,
				 "disk %zu cannot be identified: its VMM does not report its path, "
				 "device and inode (a kvmlu-vmm too old to report its disks?)", i);
	/* The VMM's own word that the open file is not what the guest was told. */
	if (json_object_object_get_ex(d, KVMLU_KEY_PROBLEM, &v) && json_object_is_type(v, json_type_string))
		return kvmlu_err(why, whylen, -ESTALE,
				 "disk %s: %s (the restore after the kexec would hold the VM)", path,
				 json_object_get_string(v));
	if (stat(path, &st) < 0)
		return kvmlu_err(why, whylen, -errno,
				 "disk %s cannot be identified: %s (the restore after the kexec "
				 "reopens it by this path)", path, strerror(errno));
	if (S_ISBLK(st.st_mode)) {
		/*
		 * The VMM identifies a block device by its device number and
		 * inode 0 (vmm/devices/virtio_blk.c): the node is in devtmpfs,
		 * remade by the next kernel, which is also why the tmpfs test
		 * below is not for it. The disk behind it is what must stay.
		 */
		if ((uint64_t)st.st_rdev != dev || ino != 0)
			return kvmlu_err(why, whylen, -ESTALE,
					 "disk %s is not the block device the VM has open (device "
					 "number %llu, the VM's %llu/%llu): the restore would reopen "
					 "another disk", path, (unsigned long long)st.st_rdev,
					 (unsigned long long)dev, (unsigned long long)ino);
		return 0;
	}
	if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)
		return kvmlu_err(why, whylen, -ESTALE,
				 "disk %s is not the file the VM has open (device/inode %llu/%llu, "
				 "the VM's %llu/%llu): the restore would reopen another disk", path,
				 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
				 (unsigned long long)dev, (unsigned long long)ino);
	if (statfs(path, &sf) < 0)
		return kvmlu_err(why, whylen, -errno, "disk %s: statfs: %s", path, strerror(errno));
	if (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)
		return kvmlu_err(why, whylen, -EXDEV,
				 "disk %s is on %s, which does not survive the kexec", path,
				 sf.f_type == TMPFS_MAGIC ? "tmpfs" : "ramfs");
	return 0;
}

int vm_disks_check(json_object *status_return, char *why, size_t whylen)
{
	json_object *disks;
	size_t n;

	if (!json_object_object_get_ex(status_return, KVMLU_KEY_DISKS, &disks))
		return 0;
	if (!json_object_is_type(disks, json_type_array))
		return kvmlu_err(why, whylen, -EPROTO, "status \"disks\" is not a list");
	n = json_object_array_length(disks);
	for (size_t i = 0; i < n; i++) {
		int rc = check_one(json_object_array_get_idx(disks, i), i, why, whylen);

		if (rc)
			return rc;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of agent/update/vm_disks.c: the preflight's question whether
 * each disk a VMM reports can be found again by its path after the
 * kexec. Temp files stand in for disks; the status replies are built the
 * way kvmlu-vmm writes them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "agent/update/vm_disks.h"

static char why[256];

/* {"disks":[{"path":P,"dev":D,"ino":I}]}, the way kvmlu-vmm reports a disk. */
static json_object *status_raw(const char *path, uint64_t dev, uint64_t ino)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	json_object *d = json_object_new_object();

	json_object_object_add(d, "path", json_object_new_string(path));
	json_object_object_add(d, "dev", json_object_new_int64((int64_t)dev));
	json_object_object_add(d, "ino", json_object_new_int64((int64_t)ino));
	json_object_array_add(arr, d);
	json_object_object_add(o, "disks", arr);
	return o;
}

/* The status for the file at path as it is now, its inode number off by ino_delta. */
static json_object *status_for(const char *path, int64_t ino_delta)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return status_raw(path, st.st_dev, (uint64_t)((int64_t)st.st_ino + ino_delta));
}

/* A disk file somewhere that is not tmpfs (the build tree), or NULL. */
static char *persistent_file(void)
{
	static char path[64];
	struct statfs sf;
	int fd;

	snprintf(path, sizeof(path), "build/kvmlu-test-disk-XXXXXX");
	fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	close(fd);
	if (statfs(path, &sf) < 0 || sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC) {
		unlink(path);
		return NULL;
	}
	return path;
}

/* A persistent disk file for one test, and the status reply naming it. */
struct disk {
	char *path;		/* NULL: no persistent file system here */
	char abs[4096];
	json_object *status;
};

static int disk_up(void **state)
{
	static struct disk d;

	memset(&d, 0, sizeof(d));
	d.path = persistent_file();
	if (d.path && !realpath(d.path, d.abs))
		return -1;
	*state = &d;
	return 0;
}

static int disk_down(void **state)
{
	struct disk *d = *state;

	if (d->path)
		unlink(d->path);
	json_object_put(d->status);
	return 0;
}

/* The test's disk as the VMM reports it (inode number off by ino_delta); skips without one. */
static json_object *disk_status(void **state, int64_t ino_delta)
{
	struct disk *d = *state;

	if (!d->path)
		skip();
	d->status = status_for(d->abs, ino_delta);
	return d->status;
}

static void test_vm_disks_accepts_no_disks(void **state)
{
	json_object *o = json_object_new_object();

	(void)state;
	assert_int_equal(vm_disks_check(o, why, sizeof(why)), 0);
	json_object_put(o);
}

static void test_vm_disks_accepts_the_file_the_vm_has_open(void **state)
{
	json_object *o = disk_status(state, 0);

	if (vm_disks_check(o, why, sizeof(why)))
		fail_msg("refused: %s", why);
}

static void test_vm_disks_refuses_a_replaced_file(void **state)
{
	json_object *o = disk_status(state, 1);

	assert_int_equal(vm_disks_check(o, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "is not the file the VM has open"));
}

/* A disk the VMM reports changed (status "problem": truncated under the VM) is refused with it. */
static void test_vm_disks_refuses_a_disk_the_vmm_says_changed(void **state)
{
	json_object *o = disk_status(state, 0);
	json_object *d = json_object_array_get_idx(json_object_object_get(o, "disks"), 0);

	json_object_object_add(d, "problem", NULL);
	if (vm_disks_check(o, why, sizeof(why)))
		fail_msg("a null problem refused: %s", why);
	json_object_object_add(d, "problem",
			       json_object_new_string("1048576 bytes now, the guest was told 67108864"));
	assert_int_equal(vm_disks_check(o, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "1048576 bytes now, the guest was told 67108864"));
}

static void test_vm_disks_refuses_a_removed_file(void **state)
{
	json_object *o = disk_status(state, 0);

	unlink(((struct disk *)*state)->path);
	assert_int_equal(vm_disks_check(o, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "cannot be identified: No such file or directory"));
}

static void test_vm_disks_refuses_a_disk_on_tmpfs(void **state)
{
	char path[] = "/dev/shm/kvmlu-test-disk-XXXXXX";
	struct statfs sf;
	json_object *o;
	int fd;

	(void)state;
	fd = mkstemp(path);
	if (fd < 0 || statfs(path, &sf) < 0 || sf.f_type != TMPFS_MAGIC) {
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		skip();
	}
	close(fd);
	o = status_for(path, 0);
	assert_int_equal(vm_disks_check(o, why, sizeof(why)), -EXDEV);
	assert_non_null(strstr(why, "is on tmpfs, which does not survive the kexec"));
	json_object_put(o);
	unlink(path);
}

/* A block device node in /dev (only stat()ed), or NULL. */
static const char *some_block_device(struct stat *st)
{
	static char path[300];
	struct dirent *e;
	DIR *d = opendir("/dev");

	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "/dev/%s", e->d_name);
		if (!stat(path, st) && S_ISBLK(st->st_mode)) {
			closedir(d);
			return path;
		}
	}
	closedir(d);
	return NULL;
}

/* Its node is in devtmpfs (a tmpfs), remade at boot: the device number counts. */
static void test_vm_disks_accepts_a_block_device_by_its_device_number(void **state)
{
	const char *p;
	struct stat st;
	json_object *o;

	(void)state;
	p = some_block_device(&st);
	if (!p)
		skip();
	o = status_raw(p, st.st_rdev, 0);
	if (vm_disks_check(o, why, sizeof(why)))
		fail_msg("%s refused: %s", p, why);
	json_object_put(o);

	o = status_raw(p, st.st_rdev + 1, 0);
	assert_int_equal(vm_disks_check(o, why, sizeof(why)), -ESTALE);
	assert_non_null(strstr(why, "is not the block device the VM has open"));
	json_object_put(o);

	/* The node's own st_dev/st_ino are not what a VMM reports for it. */
	o = status_raw(p, st.st_dev, st.st_ino);
	assert_int_equal(vm_disks_check(o, why, sizeof(why)), -ESTALE);
	json_object_put(o);
}

static void test_vm_disks_refuses_a_disk_it_cannot_identify(void **state)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	json_object *d = json_object_new_object();

	(void)state;
	json_object_object_add(d, "path", json_object_new_string("/var/lib/x.raw"));
	json_object_array_add(arr, d);
	json_object_object_add(o, "disks", arr);
	assert_int_equal(vm_disks_check(o, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "disk 0 cannot be identified"));
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vm_disks_accepts_no_disks),
		cmocka_unit_test_setup_teardown(test_vm_disks_accepts_the_file_the_vm_has_open,
						disk_up, disk_down),
		cmocka_unit_test_setup_teardown(test_vm_disks_refuses_a_replaced_file,
						disk_up, disk_down),
		cmocka_unit_test_setup_teardown(test_vm_disks_refuses_a_disk_the_vmm_says_changed,
						disk_up, disk_down),
		cmocka_unit_test_setup_teardown(test_vm_disks_refuses_a_removed_file,
						disk_up, disk_down),
		cmocka_unit_test(test_vm_disks_refuses_a_disk_on_tmpfs),
		cmocka_unit_test(test_vm_disks_accepts_a_block_device_by_its_device_number),
		cmocka_unit_test(test_vm_disks_refuses_a_disk_it_cannot_identify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

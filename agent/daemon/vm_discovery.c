// SPDX-License-Identifier: GPL-2.0
/* Discovery of VMM control sockets in the run directory (see vm_discovery.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/daemon/vm_discovery.h"
#include "common/err.h"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int vm_discovery_scan(const char *run_dir, struct journal *j, char *err, size_t errlen)
{
	char *names[JOURNAL_MAX_VMS + 1];
	unsigned int n = 0;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	d = opendir(run_dir);
	if (!d) {
		/* No directory yet: no VMM was ever started. */
		if (errno == ENOENT)
			return 0;
		return kvmlu_err(err, errlen, -errno, "run_dir %s: %s", run_dir, strerror(errno));
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[JOURNAL_SOCK_PATH_MAX];
		struct stat st;

		if (len <= 5 || strcmp(de->d_name + len - 5, ".sock"))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", run_dir, de->d_name) >= sizeof(path))
			continue;
		if (lstat(path, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (n > JOURNAL_MAX_VMS) {
			ret = kvmlu_err(err, errlen, -ENOSPC, "run_dir %s: more than %d VMs",
					run_dir, JOURNAL_MAX_VMS);
			break;
		}
		names[n] = strndup(de->d_name, len - 5);
		if (!names[n]) {
			ret = kvmlu_err(err, errlen, -ENOMEM, "out of memory");
			break;
		}
		n++;
	}
	closedir(d);
	if (!ret)
		qsort(names, n, sizeof(names[0]), cmp_names);
	for (unsigned int i = 0; i < n; i++) {
		char path[JOURNAL_SOCK_PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s.sock", run_dir, names[i]);
		if (!ret)
			ret = journal_add_vm(j, names[i], path, err, errlen);
		free(names[i]);
	}
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/* Reading the host facts preflight judges (see host_facts.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/update/host_facts.h"
#include "common/err.h"

static int read_text(const char *root, const char *path, char *buf, size_t len)
{
	char full[512];
	ssize_t n;
	int fd;

	snprintf(full, sizeof(full), "%s%s", root, path);
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

int host_facts_cmdline(const char *root, char *buf, size_t len)
{
	int ret = read_text(root, "/proc/cmdline", buf, len);
	size_t n;

	if (ret)
		return ret;
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static bool exists(const char *root, const char *path)
{
	char full[512];

	snprintf(full, sizeof(full), "%s%s", root, path);
	return access(full, F_OK) == 0;
}

int host_facts_parse_scratch(const char *text, unsigned long long *sum)
{
	const char *p = text;

	*sum = 0;
	while (*p) {
		char *end;
		unsigned long long v;

		p += strspn(p, " \t\n");
		if (!*p)
			break;
		errno = 0;
		v = strtoull(p, &end, 16);
		if (end == p || errno || (*end && !strchr(" \t\n", *end)))
			return -EINVAL;
		*sum += v;
		p = end;
	}
	return 0;
}

static uint64_t meminfo_kib(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) * 1024 : 0;
}

static int file_size(const char *what, const char *path, uint64_t *out,
		     char *err, size_t errlen)
{
	struct stat st;
	int fd;

	/* Opened, not just stat()ed: kexec_file_load will have to read it. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kvmlu_err(err, errlen, -errno, "%s %s: %s", what, path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return kvmlu_err(err, errlen, -EINVAL, "%s %s: not a non-empty regular file",
				 what, path);
	}
	close(fd);
	*out = (uint64_t)st.st_size;
	return 0;
}

int host_facts_read(const char *root, const struct journal *j, struct host_facts *h,
		    char *err, size_t errlen)
{
	static char text[64 * 1024];
	unsigned long long sum;
	int ret;

	memset(h, 0, sizeof(*h));
	ret = file_size("kernel", j->kernel, &h->kernel_bytes, err, errlen);
	if (!ret && j->initrd[0])
		ret = file_size("initrd", j->initrd, &h->initrd_bytes, err, errlen);
	if (ret)
		return ret;

	h->liveupdate_dev = exists(root, "/dev/liveupdate");
	if (exists(root, "/sys/kernel/debug/kho/out")) {
		h->kho_enabled = true;
		snprintf(h->kho_why, sizeof(h->kho_why), "debugfs kho/out present");
		if (!read_text(root, "/sys/kernel/debug/kho/out/scratch_len", text, sizeof(text)) &&
		    !host_facts_parse_scratch(text, &sum))
			h->scratch_bytes = sum;
	} else if (!host_facts_cmdline(root, text, sizeof(text)) &&
		   preflight_cmdline_has(text, "kho")) {
		/* debugfs may just not be mounted: trust the boot parameter. */
		h->kho_enabled = true;
		snprintf(h->kho_why, sizeof(h->kho_why), "kho=on in /proc/cmdline");
	} else {
		snprintf(h->kho_why, sizeof(h->kho_why),
			 "no kho=on in /proc/cmdline, no debugfs kho/out");
	}
	if (!read_text(root, "/proc/meminfo", text, sizeof(text))) {
		h->mem_total = meminfo_kib(text, "MemTotal:");
		h->mem_available = meminfo_kib(text, "MemAvailable:");
	}
	return 0;
}

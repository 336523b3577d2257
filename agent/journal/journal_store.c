// SPDX-License-Identifier: GPL-2.0
/* Saving and finding journals (see journal_store.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/journal/journal_json.h"
#include "agent/journal/journal_store.h"
#include "common/err.h"
#include "common/file_read.h"

static int mkdir_p(const char *dir)
{
	char tmp[JOURNAL_PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0750) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0750) && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Written to a temporary name and renamed: a reader never sees half. */
static int write_atomic(const char *dir, const char *name, const struct journal *j)
{
	char path[JOURNAL_PATH_MAX + 64], tmp[JOURNAL_PATH_MAX + 80];
	size_t len;
	char *text;
	int fd, ret;

	ret = mkdir_p(dir);
	if (ret)
		return ret;
	ret = journal_serialize(j, &text, &len);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		ret = -errno;
		goto err_text;
	}
	ret = write_all(fd, text, len);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
err_text:
	free(text);
	return ret;
}

int journal_store_save(const char *state_dir, const struct journal *j)
{
	return write_atomic(state_dir, "journal.json", j);
}

int journal_store_load(const char *state_dir, struct journal *j, char *err, size_t errlen)
{
	char path[JOURNAL_PATH_MAX + 16];
	size_t len;
	char *buf;
	int ret;

	snprintf(path, sizeof(path), "%s/journal.json", state_dir);
	ret = file_read_all(path, JOURNAL_MAX_BYTES, &buf, &len);
	if (ret)
		return kvmlu_err(err, errlen, ret, "%s: %s", path, strerror(-ret));
	ret = journal_parse(buf, len, j, err, errlen);
	free(buf);
	return ret;
}

void journal_store_remove(const char *state_dir)
{
	char path[JOURNAL_PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/journal.json", state_dir);
	unlink(path);
}

int journal_store_preserve(struct luo_session *s, const struct journal *j,
			   char *err, size_t errlen)
{
	size_t len;
	char *text;
	int fd, ret;

	ret = journal_serialize(j, &text, &len);
	if (ret)
		return kvmlu_err(err, errlen, ret, "journal: serialize: %s", strerror(-ret));
	fd = memfd_create("kvmlu-agent-journal", MFD_CLOEXEC);
	if (fd < 0) {
		ret = kvmlu_err(err, errlen, -errno, "journal: memfd_create: %s", strerror(errno));
		goto err_text;
	}
	ret = write_all(fd, text, len);
	if (ret) {
		kvmlu_err(err, errlen, ret, "journal: write memfd: %s", strerror(-ret));
		goto err_memfd;
	}
	ret = luo_session_create(s, AGENT_JOURNAL_SESSION, err, errlen);
	if (ret)
		goto err_memfd;
	ret = luo_session_preserve_fd(s, fd, JOURNAL_STORE_TOKEN, "journal memfd", err, errlen);
	if (ret)
		goto err_session;
	/* The session holds the file now; our fd is not needed. */
	close(fd);
	free(text);
	return 0;
err_session:
	luo_session_close(s);
err_memfd:
	close(fd);
err_text:
	free(text);
	return ret;
}

int journal_store_retrieve(struct luo_session *s, struct journal *j,
			   char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, ret;

	ret = luo_session_retrieve(s, AGENT_JOURNAL_SESSION, err, errlen);
	if (ret)
		return ret;
	ret = luo_session_retrieve_fd(s, JOURNAL_STORE_TOKEN, "journal memfd", &fd, err, errlen);
	if (ret)
		return ret;
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > JOURNAL_MAX_BYTES) {
		ret = kvmlu_err(err, errlen, -EBADMSG, "journal memfd: size %lld",
				(long long)st.st_size);
		goto err_fd;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = kvmlu_err(err, errlen, -ENOMEM, "out of memory");
		goto err_fd;
	}
	n = pread(fd, buf, (size_t)st.st_size, 0);
	if (n != st.st_size)
		ret = kvmlu_err(err, errlen, -EIO, "journal memfd: read %zd of %lld bytes",
				n, (long long)st.st_size);
	else
		ret = journal_parse(buf, (size_t)n, j, err, errlen);
	free(buf);
err_fd:
	close(fd);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* History file names, sorted (by update id, so by time). */
static int history_names(const char *dir, char ***out, unsigned int *n)
{
	unsigned int cap = 0, cnt = 0;
	char **names = NULL;
	struct dirent *de;
	DIR *d = opendir(dir);

	*n = 0;
	*out = NULL;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 6 || strcmp(de->d_name + len - 5, ".json") || de->d_name[0] == '.')
			continue;
		if (cnt == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*names));

			if (!nn)
				break;
			names = nn;
		}
		names[cnt] = strdup(de->d_name);
		if (names[cnt])
			cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(names, cnt, sizeof(*names), cmp_str);
	*out = names;
	*n = cnt;
	return 0;
}

static void free_names(char **names, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int journal_store_history_add(const char *history_dir, unsigned int keep,
			      const struct journal *j, char *err, size_t errlen)
{
	char name[64], path[JOURNAL_PATH_MAX + 80];
	unsigned int n;
	char **names;
	int ret;

	snprintf(name, sizeof(name), "%s.json", j->update_id);
	ret = write_atomic(history_dir, name, j);
	if (ret)
		return kvmlu_err(err, errlen, ret, "history %s/%s: %s", history_dir, name,
				 strerror(-ret));
	if (history_names(history_dir, &names, &n))
		return 0;
	for (unsigned int i = 0; i + keep < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", history_dir, names[i]);
		unlink(path);
	}
	free_names(names, n);
	return 0;
}

int journal_store_history_list(const char *history_dir, struct journal *js,
			       unsigned int max, unsigned int *n, unsigned int *bad)
{
	char path[JOURNAL_PATH_MAX + 80];
	unsigned int cnt, first;
	char **names;
	int ret;

	*n = 0;
	*bad = 0;
	ret = history_names(history_dir, &names, &cnt);
	if (ret)
		return ret;
	first = cnt > max ? cnt - max : 0;
	for (unsigned int i = first; i < cnt; i++) {
		size_t len;
		char *buf;

		snprintf(path, sizeof(path), "%s/%s", history_dir, names[i]);
		if (file_read_all(path, JOURNAL_MAX_BYTES, &buf, &len)) {
			(*bad)++;
			continue;
		}
		if (journal_parse(buf, len, &js[*n], NULL, 0))
			(*bad)++;
		else
			(*n)++;
		free(buf);
	}
	free_names(names, cnt);
	return 0;
}

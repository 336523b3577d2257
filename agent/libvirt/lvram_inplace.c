// SPDX-License-Identifier: GPL-2.0
/* A libvirt domain's RAM in place across a host update (see lvram_inplace.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "agent/libvirt/libvirt_errors.h"
#include "agent/libvirt/libvirt_phase.h"
#include "agent/libvirt/lvram_inplace.h"
#include "agent/libvirt/lvram_qmp.h"
#include "agent/libvirt/qemu_ram_fd.h"
#include "agent/libvirt/lvram_store.h"
#include "agent/libvirt/lvram_sum.h"
#include "common/clock.h"
#include "common/err.h"

#define IMAGE_SEALS	(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
#define COPY_CHUNK	(1 << 20)

/* libvirt's steps on the domain job->uuid, looked up when job->dom is NULL. */
static int with_domain(struct qemu_replace_job *job, int (*step)(struct qemu_replace_job *))
{
	bool looked = !job->dom;
	int rc;

	if (looked) {
		job->dom = virDomainLookupByUUIDString(job->conn, job->uuid);
		if (!job->dom) {
			snprintf(job->err, sizeof(job->err), "domain %s: not known to libvirt "
				 "(virDomainLookupByUUIDString: %s)", job->name, libvirt_last_error());
			return -ENOENT;
		}
	}
	rc = step(job);
	if (looked) {
		virDomainFree(job->dom);
		job->dom = NULL;
	}
	return rc;
}

static int real_save(struct qemu_replace_job *job)
{
	return with_domain(job, qemu_replace_save_and_hold);
}

/*
 * Only a shut-off domain starts on the held RAM: one libvirtd started
 * afresh meanwhile (autostart without its image) runs another guest.
 */
static int restart_if_off(struct qemu_replace_job *job)
{
	int active = virDomainIsActive(job->dom);

	if (active != 0) {
		snprintf(job->err, sizeof(job->err), "domain %s: %s: the guest from before the "
			 "update is not started over it; its RAM is let go", job->name,
			 active < 0 ? libvirt_last_error() : "already running (started afresh, "
			 "by autostart or by hand, without its managed save)");
		return -EEXIST;
	}
	return qemu_replace_restart_and_verify(job);
}

/*
 * A libvirtd whose domain definitions did not survive the kexec (kept on
 * a file system that did not) no longer knows the domain: it is defined
 * again from the XML its own image carries (the image came from the
 * session, checked against the journal's XXH64).
 */
static int define_from_image(struct qemu_replace_job *job)
{
	virDomainPtr d = virDomainLookupByUUIDString(job->conn, job->uuid);
	char uuid[VIR_UUID_STRING_BUFLEN];
	char *xml;

	if (d) {
		virDomainFree(d);
		return 0;
	}
	xml = virDomainSaveImageGetXMLDesc(job->conn, job->image_path,
					   VIR_DOMAIN_SAVE_IMAGE_XML_SECURE);
	if (!xml) {
		snprintf(job->err, sizeof(job->err), "domain %s: not known to libvirt, and its "
			 "image %s gives no XML to define it: %s", job->name, job->image_path,
			 libvirt_last_error());
		return -ENOENT;
	}
	d = virDomainDefineXML(job->conn, xml);
	free(xml);
	if (!d) {
		snprintf(job->err, sizeof(job->err), "domain %s: not known to libvirt, and "
			 "defining it from its image failed: %s", job->name, libvirt_last_error());
		return -EIO;
	}
	/* The image's domain must be this one: its UUID is the identity. */
	if (virDomainGetUUIDString(d, uuid) < 0 || strcmp(uuid, job->uuid)) {
		virDomainFree(d);
		snprintf(job->err, sizeof(job->err), "domain %s: its image defines another "
			 "domain (UUID %s)", job->name, uuid);
		return -EINVAL;
	}
	virDomainFree(d);
	job->defined = true;
	return 0;
}

static int real_restart(struct qemu_replace_job *job)
{
	int rc = 0;

	if (!job->dom && job->image_path)
		rc = define_from_image(job);
	return rc ? rc : with_domain(job, restart_if_off);
}

const struct lvram_inplace_ops lvram_inplace_real = {
	.save_and_hold = real_save,
	.restart = real_restart,
	.create = luo_session_create,
	.retrieve = luo_session_retrieve,
	.preserve_fd = luo_session_preserve_fd,
	.retrieve_fd = luo_session_retrieve_fd,
	.finish = luo_session_finish,
	.close = luo_session_close,
};

static const struct lvram_inplace_ops *ops = &lvram_inplace_real;

void lvram_inplace_set_ops(const struct lvram_inplace_ops *o)
{
	ops = o ? o : &lvram_inplace_real;
}

int lvram_inplace_image_path(const char *save_dir, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s.save", save_dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int lvram_inplace_probe(const struct libvirt_domain_report *d, const char *qmp_dir, char *err,
			size_t errlen)
{
	struct qmp_client c;
	char path[160], why[256], off_why[256];
	pid_t pid;
	int fdno, rc;

	rc = qemu_ram_find_pid(d->uuid, &pid, &fdno, why, sizeof(why));
	if (!rc && lvram_qmp_path(qmp_dir, d->uuid, path, sizeof(path)))
		rc = kvmlu_err(why, sizeof(why), -ENAMETOOLONG, "QMP socket path too long");
	if (!rc)
		rc = lvram_qmp_connect(&c, path, pid, 0, why, sizeof(why));
	if (rc)
		return kvmlu_err(err, errlen, rc, "libvirt domain %s: kvmlu's QMP socket: %s",
				 d->name, why);
	rc = lvram_qmp_ignore_shared(&c, true, why, sizeof(why));
	/* Off again whatever happened: a save with it on would leave the RAM out. */
	if (rc)
		lvram_qmp_ignore_shared(&c, false, off_why, sizeof(off_why));
	else
		rc = lvram_qmp_ignore_shared(&c, false, why, sizeof(why));
	qmp_client_close(&c);
	if (rc)
		return kvmlu_err(err, errlen, rc, "libvirt domain %s: x-ignore-shared on and off: %s",
				 d->name, why);
	return 0;
}

static void job_init(struct qemu_replace_job *job, virConnectPtr conn,
		     const struct libvirt_domain_report *d, const char *qmp_dir)
{
	memset(job, 0, sizeof(*job));
	job->conn = conn;
	snprintf(job->uuid, sizeof(job->uuid), "%s", d->uuid);
	snprintf(job->name, sizeof(job->name), "%s", d->name);
	snprintf(job->qmp_dir, sizeof(job->qmp_dir), "%s", qmp_dir);
	job->image_bytes = -1;
}

static int dom_fail(struct libvirt_domain_report *d, char *err, size_t errlen, int rc,
		    const char *why)
{
	snprintf(d->error, sizeof(d->error), "%.767s", why);
	d->state = LIBVIRT_DOMAIN_FAILED;
	return kvmlu_err(err, errlen, rc ? rc : -EIO, "libvirt domain %s: %s", d->name, why);
}

/* Copy in (from its start) to out while hashing; exactly len bytes. */
static int copy_hashed(int in, int out, uint64_t len, uint64_t *xxh, char *why, size_t n)
{
	XXH64_state_t *st = XXH64_createState();
	char *buf = malloc(COPY_CHUNK);
	uint64_t done = 0;
	int rc = 0;

	if (!st || !buf) {
		XXH64_freeState(st);
		free(buf);
		return kvmlu_err(why, n, -ENOMEM, "out of memory");
	}
	XXH64_reset(st, 0);
	while (done < len && !rc) {
		size_t want = len - done < COPY_CHUNK ? (size_t)(len - done) : COPY_CHUNK;
		ssize_t r = pread(in, buf, want, (off_t)done);

		if (r <= 0) {
			rc = kvmlu_err(why, n, r < 0 ? -errno : -EIO, "read at %" PRIu64 ": %s", done,
				       r < 0 ? strerror(errno) : "the file ended early");
			break;
		}
		XXH64_update(st, buf, (size_t)r);
		if (out >= 0 && pwrite(out, buf, (size_t)r, (off_t)done) != r)
			rc = kvmlu_err(why, n, -EIO, "write at %" PRIu64 ": %s", done, strerror(errno));
		done += (uint64_t)r;
	}
	*xxh = XXH64_digest(st);
	XXH64_freeState(st);
	free(buf);
	return rc;
}

/* The managed-save image into a sealed memfd, d's image fields set. */
static int image_to_memfd(struct libvirt_domain_report *d, int *mfd, char *why, size_t n)
{
	struct stat st;
	uint64_t xxh;
	int in, out, rc;

	in = open(d->image_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return kvmlu_err(why, n, -errno, "its managed-save image %s: %s (libvirt_save_dir "
				 "must be where libvirt keeps managed saves)", d->image_path,
				 strerror(errno));
	if (fstat(in, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(in);
		return kvmlu_err(why, n, -EINVAL, "its managed-save image %s is not a regular "
				 "file with data", d->image_path);
	}
	/* Device state only: an image as big as the RAM has the RAM in it. */
	if ((uint64_t)st.st_size >= d->memory_bytes) {
		close(in);
		return kvmlu_err(why, n, -EIO, "its managed-save image %s has %lld bytes, pc.ram "
				 "%" PRIu64 ": the RAM went to disk", d->image_path,
				 (long long)st.st_size, d->memory_bytes);
	}
	out = memfd_create("kvmlu-lv-image", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (out < 0 || ftruncate(out, st.st_size)) {
		rc = kvmlu_err(why, n, -errno, "image memfd: %s", strerror(errno));
		goto fail;
	}
	rc = copy_hashed(in, out, (uint64_t)st.st_size, &xxh, why, n);
	if (!rc && fcntl(out, F_ADD_SEALS, IMAGE_SEALS))
		rc = kvmlu_err(why, n, -errno, "image memfd seals: %s", strerror(errno));
	if (rc)
		goto fail;
	close(in);
	d->image_bytes = st.st_size;
	d->image_uid = st.st_uid;
	d->image_gid = st.st_gid;
	d->image_mode = st.st_mode & 07777;
	snprintf(d->image_xxh64, sizeof(d->image_xxh64), "%016" PRIx64, xxh);
	*mfd = out;
	return 0;
fail:
	if (out >= 0)
		close(out);
	close(in);
	return rc;
}

struct preserve_ctx {
	struct libvirt_domain_report *d;
	struct luo_session *sess;
};

/*
 * The RAM into the domain's session while the guest still runs
 * (save_and_hold's before_suspend): PRESERVE_FD pins and migrates every
 * page of it, seconds for a large guest, which must not fall into the
 * pause.
 */
static int preserve_ram(struct qemu_replace_job *job, int ram_fd, char *why, size_t n)
{
	struct preserve_ctx *p = job->arg;
	int rc;

	rc = luo_session_name_for_domain(p->d->uuid, p->d->session, why, n);
	if (!rc)
		rc = ops->create(p->sess, p->d->session, why, n);
	if (!rc) {
		rc = ops->preserve_fd(p->sess, ram_fd, LVRAM_TOKEN_RAM, "domain RAM", why, n);
		if (rc)
			ops->close(p->sess);	/* unpreserves what it took */
	}
	return rc;
}

int lvram_inplace_prepare(virConnectPtr conn, struct libvirt_domain_report *d,
			  const char *qmp_dir, const char *save_dir, struct luo_session *sess,
			  char *err, size_t errlen)
{
	struct qemu_replace_job job;
	struct preserve_ctx pctx;
	char why[512];
	int image_fd = -1, rc;

	if (lvram_inplace_image_path(save_dir, d->name, d->image_path, sizeof(d->image_path)))
		return dom_fail(d, err, errlen, -ENAMETOOLONG, "managed-save image path too long");
	job_init(&job, conn, d, qmp_dir);
	pctx.d = d;
	pctx.sess = sess;
	job.before_suspend = preserve_ram;
	job.arg = &pctx;
	d->suspended_ns = (int64_t)kvmlu_wall_ns();
	rc = ops->save_and_hold(&job);
	if (rc) {
		/* Running again on its old QEMU, or lost: job.err says which. Nothing to keep. */
		if (sess->fd >= 0)
			ops->close(sess);
		d->image_path[0] = '\0';
		d->session[0] = '\0';
		return dom_fail(d, err, errlen, rc, job.err);
	}
	d->saved_ns = (int64_t)kvmlu_wall_ns();
	d->state = LIBVIRT_DOMAIN_SAVED;
	d->in_place = true;
	d->memory_bytes = job.size;
	d->qemu_uid = (uint32_t)job.qemu_uid;
	snprintf(d->checksum, sizeof(d->checksum), "%s", job.sum);
	snprintf(d->ram, sizeof(d->ram), "in place: %" PRIu64 " bytes of RAM held, not written "
		 "to disk (the save's own statistics: %lld bytes)", job.size,
		 (long long)job.image_bytes);
	/*
	 * From here on the domain is shut off with its RAM held: a failure
	 * leaves it saved in place, and the caller's rollback restarts it.
	 */
	if (d->checksum[0] == '-') {
		rc = kvmlu_err(why, sizeof(why), -EIO, "its RAM could not be hashed at the pause");
		goto fail;
	}
	rc = image_to_memfd(d, &image_fd, why, sizeof(why));
	if (!rc)
		rc = ops->preserve_fd(sess, image_fd, LVRAM_TOKEN_IMAGE, "managed-save image", why,
				      sizeof(why));
	if (image_fd >= 0)
		close(image_fd);
	if (rc) {
		ops->close(sess);	/* the kernel lets go of the RAM it took */
		goto fail;
	}
	snprintf(d->ram, sizeof(d->ram), "in place: %" PRIu64 " bytes of RAM kept in LUO session "
		 "%s, not written to disk; managed-save image %" PRId64 " bytes (device state)",
		 d->memory_bytes, d->session, d->image_bytes);
	return 0;
fail:
	snprintf(d->error, sizeof(d->error), "%.767s", why);
	return kvmlu_err(err, errlen, rc, "libvirt domain %s: %s", d->name, why);
}

int lvram_inplace_rollback(virConnectPtr conn, struct libvirt_domain_report *d,
			   const char *qmp_dir, struct luo_session *sess, char *err, size_t errlen)
{
	struct qemu_replace_job job;
	int rc;

	/* Nothing goes across a kexec any more: the kernel lets go of both files. */
	if (sess->fd >= 0)
		ops->close(sess);
	job_init(&job, conn, d, qmp_dir);
	rc = ops->restart(&job);
	if (rc)
		return dom_fail(d, err, errlen, rc, job.err);
	d->state = LIBVIRT_DOMAIN_RESUMED;
	d->resumed_ns = (int64_t)kvmlu_wall_ns();
	return 0;
}

/* The image back where libvirt reads the managed save, as it was (owner, mode). */
static int image_write_back(const struct libvirt_domain_report *d, int image_fd, char *why,
			    size_t n)
{
	char tmp[sizeof(d->image_path) + 16];
	uint64_t xxh = 0;
	char hex[17];
	int fd, rc;

	fd = open(d->image_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		struct stat st;

		/* The file survived the kexec (on disk): used if it is the same image. */
		rc = fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size != d->image_bytes ? -EINVAL :
		     copy_hashed(fd, -1, (uint64_t)d->image_bytes, &xxh, why, n);
		close(fd);
		snprintf(hex, sizeof(hex), "%016" PRIx64, xxh);
		if (!rc && !strcmp(hex, d->image_xxh64))
			return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.kvmlu-new", d->image_path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return kvmlu_err(why, n, -errno, "writing its managed-save image %s: %s", tmp,
				 strerror(errno));
	rc = copy_hashed(image_fd, fd, (uint64_t)d->image_bytes, &xxh, why, n);
	if (!rc && (fchown(fd, d->image_uid, d->image_gid) || fchmod(fd, d->image_mode) ||
		    fsync(fd)))
		rc = kvmlu_err(why, n, -errno, "its managed-save image %s: %s", tmp,
			       strerror(errno));
	close(fd);
	if (!rc && rename(tmp, d->image_path))
		rc = kvmlu_err(why, n, -errno, "its managed-save image %s: %s", d->image_path,
			       strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}

/* The two files out of the session, checked against the journal. */
static int take_files(struct libvirt_domain_report *d, struct luo_session *sess, int *ram_fd,
		      int *image_fd, char *why, size_t n)
{
	struct stat st;
	uint64_t xxh;
	char hex[17];
	int rc;

	*ram_fd = *image_fd = -1;
	rc = ops->retrieve_fd(sess, LVRAM_TOKEN_RAM, "domain RAM", ram_fd, why, n);
	if (!rc)
		rc = ops->retrieve_fd(sess, LVRAM_TOKEN_IMAGE, "managed-save image", image_fd, why,
				      n);
	if (rc)
		return rc;
	if (fstat(*ram_fd, &st) || (uint64_t)st.st_size != d->memory_bytes)
		return kvmlu_err(why, n, -EINVAL, "its RAM from the session has %lld bytes, the "
				 "journal says %" PRIu64, (long long)st.st_size, d->memory_bytes);
	if (fstat(*image_fd, &st) || st.st_size != d->image_bytes)
		return kvmlu_err(why, n, -EINVAL, "its image from the session has %lld bytes, the "
				 "journal says %" PRId64, (long long)st.st_size, d->image_bytes);
	rc = copy_hashed(*image_fd, -1, (uint64_t)d->image_bytes, &xxh, why, n);
	if (rc)
		return rc;
	snprintf(hex, sizeof(hex), "%016" PRIx64, xxh);
	if (strcmp(hex, d->image_xxh64))
		return kvmlu_err(why, n, -EIO, "its image from the session differs from the one "
				 "saved (XXH64 %s, the journal says %s)", hex, d->image_xxh64);
	return 0;
}

int lvram_inplace_restore(virConnectPtr conn, struct libvirt_domain_report *d,
			  const char *qmp_dir, char *err, size_t errlen)
{
	struct qemu_replace_job job;
	struct luo_session sess;
	char why[512], text[1400];
	int ram_fd = -1, image_fd = -1, rc;

	luo_session_init(&sess);
	libvirt_phase_log(d->name, "retrieve");
	rc = ops->retrieve(&sess, d->session, why, sizeof(why));
	if (rc) {
		snprintf(text, sizeof(text), "its LUO session %s: %s. Not started, nothing "
			 "cold-booted: without its RAM its managed-save image (device state only) "
			 "cannot be restored; virsh managedsave-remove %s, then virsh start %s "
			 "boots it afresh", d->session, why, d->name, d->name);
		return dom_fail(d, err, errlen, rc, text);
	}
	rc = take_files(d, &sess, &ram_fd, &image_fd, why, sizeof(why));
	if (!rc)
		libvirt_phase_log(d->name, "retrieved");
	if (!rc)
		rc = lvram_sum(ram_fd, d->checksum_after, why, sizeof(why));
	if (!rc)
		libvirt_phase_log(d->name, "hashed");
	if (!rc && strcmp(d->checksum, d->checksum_after)) {
		snprintf(why, sizeof(why), "its RAM differs from the pause (checksum %s, now %s)",
			 d->checksum, d->checksum_after);
		rc = -EIO;
	}
	if (!rc)
		rc = image_write_back(d, image_fd, why, sizeof(why));
	if (rc) {
		/* Closing a retrieved session finishes it: the RAM is let go. */
		if (ram_fd >= 0)
			close(ram_fd);
		if (image_fd >= 0)
			close(image_fd);
		ops->close(&sess);
		snprintf(text, sizeof(text), "%s. Not started, never run on RAM that is not "
			 "verified, nothing cold-booted; virsh managedsave-remove %s, then virsh "
			 "start %s boots it afresh", why, d->name, d->name);
		return dom_fail(d, err, errlen, rc, text);
	}
	close(image_fd);
	/* The agent's reference keeps the RAM; the kernel's hold ends. */
	rc = lvram_store_hold(d->uuid, ram_fd, d->memory_bytes, (uid_t)d->qemu_uid, d->checksum);
	if (!rc)
		lvram_store_set_verified(d->uuid);	/* hashed equal just above */
	if (!rc && ops->finish(&sess, why, sizeof(why)))
		fprintf(stderr, "kvmlu-agent: %s: %s (the RAM is held all the same)\n", d->name, why);
	ops->close(&sess);
	if (rc) {
		snprintf(text, sizeof(text), "cannot hold its RAM (%s). Not started, nothing "
			 "cold-booted; virsh managedsave-remove %s, then virsh start %s boots it "
			 "afresh", strerror(-rc), d->name, d->name);
		return dom_fail(d, err, errlen, rc, text);
	}
	job_init(&job, conn, d, qmp_dir);
	job.verified = true;
	job.image_path = d->image_path;
	rc = ops->restart(&job);
	if (rc) {
		/* Shut off with its image: the RAM stays held for the retry job.err names. */
		if (rc == -EEXIST)
			lvram_store_release(d->uuid);
		return dom_fail(d, err, errlen, rc, job.err);
	}
	d->state = LIBVIRT_DOMAIN_RESTORED;
	d->resumed_ns = (int64_t)kvmlu_wall_ns();
	snprintf(d->ram, sizeof(d->ram), "in place: %" PRIu64 " bytes of RAM kept across the "
		 "kexec in LUO session %s, not written to disk; checksum %s equal before the "
		 "guest ran; managed-save image %" PRId64 " bytes (device state)%s", d->memory_bytes,
		 d->session, d->checksum_after, d->image_bytes, job.defined ? "; libvirtd did "
		 "not know the domain: defined again from its image" : "");
	return 0;
}

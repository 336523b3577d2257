// SPDX-License-Identifier: GPL-2.0
/*
 * libvirt domains suspended, saved and restored around a host update
 * (see libvirt_domains.h for the lifecycle). Each libvirt call is made
 * once here, and its error names the call, the domain and libvirt's text.
 */
#include <errno.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/libvirt/libvirt_domains.h"
#include "agent/libvirt/libvirt_errors.h"
#include "agent/libvirt/libvirt_phase.h"
#include "agent/libvirt/libvirt_metadata.h"
#include "agent/libvirt/libvirt_ram_class.h"
#include "agent/libvirt/lvram_inplace.h"
#include "agent/libvirt/qemu_ram_fd.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/test_hooks.h"

static int lv_connect(struct libvirt_domains *s, char *err, size_t errlen)
{
	libvirt_errors_quiet();
	s->conn = virConnectOpen(s->uri);
	if (!s->conn)
		return kvmlu_err(err, errlen, -ECONNREFUSED, "virConnectOpen %s: %s", s->uri,
				 libvirt_last_error());
	return 0;
}

int libvirt_domains_open(struct libvirt_domains *s, const char *uri, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	for (unsigned int i = 0; i < LIBVIRT_DOMAINS_MAX; i++)
		luo_session_init(&s->sess[i]);
	if (!uri)
		uri = LIBVIRT_DEFAULT_URI;
	if (strlen(uri) >= sizeof(s->uri))
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "libvirt URI %.64s... too long", uri);
	snprintf(s->uri, sizeof(s->uri), "%s", uri);
	return lv_connect(s, err, errlen);
}

int libvirt_domains_reconnect(struct libvirt_domains *s, char *err, size_t errlen)
{
	if (s->conn)
		virConnectClose(s->conn);
	s->conn = NULL;
	return lv_connect(s, err, errlen);
}

void libvirt_domains_close(struct libvirt_domains *s)
{
	if (s->conn)
		virConnectClose(s->conn);
	s->conn = NULL;
}

static int fail(struct libvirt_domain_report *d, char *err, size_t errlen, int ret,
		const char *what)
{
	snprintf(d->error, sizeof(d->error), "%s: %s", what, libvirt_last_error());
	d->state = LIBVIRT_DOMAIN_FAILED;
	return kvmlu_err(err, errlen, ret, "libvirt domain %s: %s", d->name, d->error);
}

static int domain_optout(virDomainPtr dom, struct libvirt_domain_report *d, bool *optout,
			 char *err, size_t errlen)
{
	char *text, why[256];
	int ret;

	*optout = false;
	text = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, LIBVIRT_METADATA_NS,
				    VIR_DOMAIN_AFFECT_LIVE);
	if (!text) {
		virErrorPtr e = virGetLastError();

		if (e && e->code == VIR_ERR_NO_DOMAIN_METADATA)
			return 0;
		return fail(d, err, errlen, -EIO, "virDomainGetMetadata");
	}
	ret = libvirt_metadata_optout_text(text, optout, why, sizeof(why));
	free(text);
	if (ret) {
		snprintf(d->error, sizeof(d->error), "metadata: %.200s", why);
		d->state = LIBVIRT_DOMAIN_FAILED;
		return kvmlu_err(err, errlen, ret, "libvirt domain %s: %s", d->name, d->error);
	}
	return 0;
}

/* One report per active domain, opted-out ones marked; nothing touched. */
static int list_domains(struct libvirt_domains *s, char *err, size_t errlen)
{
	virDomainPtr *doms = NULL;
	int n, ret = 0;

	n = virConnectListAllDomains(s->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (n < 0)
		return kvmlu_err(err, errlen, -EIO, "virConnectListAllDomains %s: %s", s->uri,
				 libvirt_last_error());
	if (n > LIBVIRT_DOMAINS_MAX) {
		ret = kvmlu_err(err, errlen, -E2BIG, "%d libvirt domains running, at most %d handled",
				n, LIBVIRT_DOMAINS_MAX);
		goto out_free;
	}
	s->nr = 0;
	for (int i = 0; i < n && !ret; i++) {
		struct libvirt_domain_report *d = &s->d[s->nr++];
		const char *name = virDomainGetName(doms[i]);
		bool optout;
		int st, reason;

		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", name ? name : "?");
		if (virDomainGetUUIDString(doms[i], d->uuid) < 0) {
			ret = fail(d, err, errlen, -EIO, "virDomainGetUUIDString");
			break;
		}
		if (virDomainGetState(doms[i], &st, &reason, 0) < 0) {
			ret = fail(d, err, errlen, -EIO, "virDomainGetState");
			break;
		}
		d->was_paused = st == VIR_DOMAIN_PAUSED;
		ret = domain_optout(doms[i], d, &optout, err, errlen);
		if (!ret)
			d->state = optout ? LIBVIRT_DOMAIN_OPTED_OUT : LIBVIRT_DOMAIN_LISTED;
	}
out_free:
	for (int i = 0; i < n; i++)
		virDomainFree(doms[i]);
	free(doms);
	return ret;
}

static virDomainPtr lookup(struct libvirt_domains *s, struct libvirt_domain_report *d,
			   char *err, size_t errlen)
{
	virDomainPtr dom = virDomainLookupByUUIDString(s->conn, d->uuid);
	const char *name;

	if (!dom) {
		fail(d, err, errlen, -ENOENT, "virDomainLookupByUUIDString");
		return NULL;
	}
	/* The UUID is the identity; a renamed domain is still the same one. */
	name = virDomainGetName(dom);
	if (name && strcmp(name, d->name))
		snprintf(d->name, sizeof(d->name), "%s", name);
	return dom;
}

static int resume(virDomainPtr dom, struct libvirt_domain_report *d, char *err, size_t errlen)
{
	int st, reason;

	/* A failed managed save may already have let the domain run again. */
	if (!d->was_paused && virDomainGetState(dom, &st, &reason, 0) == 0 &&
	    st == VIR_DOMAIN_RUNNING)
		goto resumed;
	if (!d->was_paused && virDomainResume(dom) < 0)
		return fail(d, err, errlen, -EIO, "virDomainResume");
resumed:
	d->state = LIBVIRT_DOMAIN_RESUMED;
	d->resumed_ns = (int64_t)kvmlu_wall_ns();
	return 0;
}

static int prepare_one(struct libvirt_domains *s, struct libvirt_domain_report *d,
		       bool dry_run, char *err, size_t errlen)
{
	/* Restored in the state it had: a paused domain is not unpaused. */
	unsigned int flags = d->was_paused ? VIR_DOMAIN_SAVE_PAUSED : VIR_DOMAIN_SAVE_RUNNING;
	virDomainPtr dom = lookup(s, d, err, errlen);
	int ret = 0;

	if (!dom)
		return -ENOENT;
	d->suspended_ns = (int64_t)kvmlu_wall_ns();
	if (!dry_run)
		libvirt_phase_log(d->name, "suspend");
	if (!d->was_paused && virDomainSuspend(dom) < 0) {
		d->suspended_ns = 0;
		ret = fail(d, err, errlen, -EIO, "virDomainSuspend");
		goto out_free;
	}
	d->state = LIBVIRT_DOMAIN_SUSPENDED;
	if (dry_run) {
		ret = resume(dom, d, err, errlen);
		goto out_free;
	}
	if (virDomainManagedSave(dom, flags) < 0) {
		char why[sizeof(d->error)];

		snprintf(why, sizeof(why), "virDomainManagedSave: %s", libvirt_last_error());
		/* The save failed, the domain is still there: let it run again. */
		if (!resume(dom, d, err, errlen))
			d->state = LIBVIRT_DOMAIN_FAILED;
		memcpy(d->error, why, sizeof(d->error));
		ret = kvmlu_err(err, errlen, -EIO, "libvirt domain %s: %s", d->name, d->error);
		goto out_free;
	}
	d->state = LIBVIRT_DOMAIN_SAVED;
	d->saved_ns = (int64_t)kvmlu_wall_ns();
	libvirt_phase_log(d->name, "saved");
out_free:
	virDomainFree(dom);
	return ret;
}

/* The words for d's RAM, by the configured mode. */
static void plan(const struct libvirt_domains *s, const struct libvirt_domain_report *d,
		 unsigned int reasons, const char *why, char *buf, size_t len)
{
	if (s->ram_in_place)
		lvram_plan_text_in_place(s->ram_refuse, d->was_paused, reasons, why, buf, len);
	else
		lvram_plan_text(s->ram_refuse, reasons, why, buf, len);
}

/*
 * What happens to d's RAM and why, into d->ram; nothing is touched.
 * True when its RAM can stay in place.
 */
static bool judge_ram(struct libvirt_domains *s, struct libvirt_domain_report *d)
{
	enum lvram_started started = LVRAM_STARTED_UNKNOWN;
	virDomainPtr dom = virDomainLookupByUUIDString(s->conn, d->uuid);
	unsigned int reasons = 0;
	char why[256];
	char *xml;
	pid_t pid;
	int fdno, ret;

	if (!dom) {
		snprintf(why, sizeof(why), "virDomainLookupByUUIDString: %s",
			 libvirt_last_error());
		plan(s, d, 0, why, d->ram, sizeof(d->ram));
		return false;
	}
	xml = virDomainGetXMLDesc(dom, 0);
	virDomainFree(dom);
	if (!xml) {
		snprintf(why, sizeof(why), "virDomainGetXMLDesc: %s", libvirt_last_error());
		plan(s, d, 0, why, d->ram, sizeof(d->ram));
		return false;
	}
	/* The live fact: the wrapper's pc.ram memfd on its QEMU's command line. */
	ret = qemu_ram_find_pid(d->uuid, &pid, &fdno, NULL, 0);
	if (!ret)
		started = LVRAM_STARTED_WRAPPER;
	else if (ret == -ENOENT)
		started = LVRAM_STARTED_PLAIN;
	ret = lvram_classify(xml, strlen(xml), started, &reasons, why, sizeof(why));
	free(xml);
	if (test_hook_lvram_tcg())
		reasons &= ~(unsigned int)LVRAM_NOT_KVM;
	plan(s, d, reasons, ret ? why : NULL, d->ram, sizeof(d->ram));
	return !ret && !reasons && !d->was_paused;
}

/*
 * libvirt_ram "refuse": every domain that would be saved, named with its
 * reasons, into err. Nothing has been touched yet.
 */
static int refuse_saves(struct libvirt_domains *s, char *err, size_t errlen)
{
	size_t used = 0;
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->nr; i++) {
		int w;

		if (s->d[i].state != LIBVIRT_DOMAIN_LISTED ||
		    (s->ram_in_place && s->accepted[i]))
			continue;
		if (!n++ && err && errlen)
			used = (size_t)snprintf(err, errlen, "libvirt_ram is \"%s\" and "
						"libvirt domains would have their RAM written to "
						"disk:", s->ram_in_place ? "in-place" : "refuse");
		if (!err || used >= errlen)
			continue;
		w = snprintf(err + used, errlen - used, "%s domain %s: %s", n > 1 ? ";" : "",
			     s->d[i].name, s->d[i].ram);
		if (w > 0)
			used += (size_t)w;
	}
	return n ? -EPERM : 0;
}

int libvirt_domains_judge(struct libvirt_domains *s, char *err, size_t errlen)
{
	int ret;

	ret = list_domains(s, err, errlen);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < s->nr; i++)
		s->accepted[i] = s->d[i].state == LIBVIRT_DOMAIN_LISTED && judge_ram(s, &s->d[i]);
	return s->ram_refuse ? refuse_saves(s, err, errlen) : 0;
}

int libvirt_domains_prepare(struct libvirt_domains *s, bool dry_run, char *err, size_t errlen)
{
	char why[64];
	int ret;

	/* Judged again: a domain may have started since preflight. */
	ret = libvirt_domains_judge(s, err, errlen);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < s->nr; i++) {
		if (s->d[i].state != LIBVIRT_DOMAIN_LISTED)
			continue;
		/*
		 * A dry run suspends and resumes; one that would keep the RAM in
		 * place first proves kvmlu's QMP socket takes x-ignore-shared.
		 */
		bool in_place = s->ram_in_place && s->accepted[i];

		if (in_place && !dry_run) {
			ret = lvram_inplace_prepare(s->conn, &s->d[i], s->qmp_dir, s->save_dir,
						    &s->sess[i], err, errlen);
		} else {
			ret = in_place ? lvram_inplace_probe(&s->d[i], s->qmp_dir, err, errlen) : 0;
			if (ret && err)
				snprintf(s->d[i].error, sizeof(s->d[i].error), "%.767s", err);
			if (!ret)
				ret = prepare_one(s, &s->d[i], dry_run, err, errlen);
		}
		if (ret) {
			/* err keeps the first failure; the rollback's own is secondary. */
			libvirt_domains_rollback(s, why, sizeof(why));
			return ret;
		}
	}
	return 0;
}

static int start_from_save(struct libvirt_domains *s, struct libvirt_domain_report *d,
			   char *err, size_t errlen)
{
	virDomainPtr dom = lookup(s, d, err, errlen);
	int has, st, reason, want, ret = 0;

	if (!dom)
		return -ENOENT;
	/*
	 * libvirtd may have been first: a domain marked autostart is started
	 * from its managed save when libvirtd starts, and the agent now runs
	 * after it. Restored by libvirt is restored; booted afresh is not.
	 */
	if (virDomainIsActive(dom) == 1) {
		if (virDomainGetState(dom, &st, &reason, 0) < 0) {
			ret = fail(d, err, errlen, -EIO, "virDomainGetState");
			goto out_free;
		}
		if ((st == VIR_DOMAIN_RUNNING && reason == VIR_DOMAIN_RUNNING_RESTORED) ||
		    (st == VIR_DOMAIN_PAUSED && reason == VIR_DOMAIN_PAUSED_STARTING_UP) ||
		    (st == VIR_DOMAIN_PAUSED && reason == VIR_DOMAIN_PAUSED_USER)) {
			d->resumed_ns = (int64_t)kvmlu_wall_ns();
			goto out_free;
		}
		snprintf(d->error, sizeof(d->error),
			 "already running, but not from its managed save (state %d, reason %d): "
			 "someone started it afresh and the guest's state from before the "
			 "update is lost", st, reason);
		d->state = LIBVIRT_DOMAIN_FAILED;
		ret = kvmlu_err(err, errlen, -ESTALE, "libvirt domain %s: %s", d->name, d->error);
		goto out_free;
	}
	has = virDomainHasManagedSaveImage(dom, 0);
	if (has < 0) {
		ret = fail(d, err, errlen, -EIO, "virDomainHasManagedSaveImage");
		goto out_free;
	}
	/* Without the image virDomainCreate would cold-boot: the guest's state is lost. */
	if (!has) {
		snprintf(d->error, sizeof(d->error), "no managed save image: not cold-booting it");
		d->state = LIBVIRT_DOMAIN_FAILED;
		ret = kvmlu_err(err, errlen, -ENOENT, "libvirt domain %s: %s", d->name, d->error);
		goto out_free;
	}
	libvirt_phase_log(d->name, "start");
	if (virDomainCreate(dom) < 0) {
		ret = fail(d, err, errlen, -EIO, "virDomainCreate from managed save");
		goto out_free;
	}
	libvirt_phase_log(d->name, "running");
	if (virDomainGetState(dom, &st, &reason, 0) < 0) {
		ret = fail(d, err, errlen, -EIO, "virDomainGetState");
		goto out_free;
	}
	want = d->was_paused ? VIR_DOMAIN_PAUSED : VIR_DOMAIN_RUNNING;
	if (st != want) {
		snprintf(d->error, sizeof(d->error),
			 "started from managed save but in state %d (reason %d), want %d", st,
			 reason, want);
		d->state = LIBVIRT_DOMAIN_FAILED;
		ret = kvmlu_err(err, errlen, -EIO, "libvirt domain %s: %s", d->name, d->error);
		goto out_free;
	}
	d->resumed_ns = (int64_t)kvmlu_wall_ns();
out_free:
	virDomainFree(dom);
	return ret;
}

int libvirt_domains_rollback(struct libvirt_domains *s, char *err, size_t errlen)
{
	int first = 0;

	for (unsigned int i = s->nr; i-- > 0;) {
		struct libvirt_domain_report *d = &s->d[i];
		/* err keeps the first failure; later ones are in their reports. */
		char *e = first ? NULL : err;
		size_t el = first ? 0 : errlen;
		virDomainPtr dom;
		int ret = 0;

		if (d->state == LIBVIRT_DOMAIN_SAVED && d->in_place) {
			ret = lvram_inplace_rollback(s->conn, d, s->qmp_dir, &s->sess[i], e, el);
		} else if (d->state == LIBVIRT_DOMAIN_SAVED) {
			ret = start_from_save(s, d, e, el);
			if (!ret)
				d->state = LIBVIRT_DOMAIN_RESUMED;
		} else if (d->state == LIBVIRT_DOMAIN_SUSPENDED) {
			dom = lookup(s, d, e, el);
			ret = dom ? resume(dom, d, e, el) : -ENOENT;
			if (dom)
				virDomainFree(dom);
		}
		if (ret)
			first = -EIO;
	}
	return first;
}

int libvirt_domains_restore(struct libvirt_domains *s, char *err, size_t errlen)
{
	int first = 0;

	for (unsigned int i = 0; i < s->nr; i++) {
		struct libvirt_domain_report *d = &s->d[i];

		if (d->state != LIBVIRT_DOMAIN_SAVED)
			continue;
		if (d->in_place) {
			if (lvram_inplace_restore(s->conn, d, s->qmp_dir, first ? NULL : err,
						  first ? 0 : errlen))
				first = -EIO;
			continue;	/* restored or failed: lvram_inplace_restore set it */
		}
		if (start_from_save(s, d, first ? NULL : err, first ? 0 : errlen)) {
			first = -EIO;
			continue;	/* the others still get their chance */
		}
		d->state = LIBVIRT_DOMAIN_RESTORED;
	}
	return first;
}

struct json_object *libvirt_domains_to_json(const struct libvirt_domains *s)
{
	return libvirt_domain_reports_to_json(s->d, s->nr);
}

int libvirt_domains_from_json(struct json_object *arr, struct libvirt_domains *s,
			      char *err, size_t errlen)
{
	return libvirt_domain_reports_from_json(arr, s->d, &s->nr, err, errlen);
}

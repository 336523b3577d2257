// SPDX-License-Identifier: GPL-2.0
/*
 * libvirt domains in a host update (see libvirt_update.h for the
 * lifecycle). The state file is the only thing that crosses the kexec
 * from here; it is written whole to a temp name and renamed, so the next
 * kernel finds the old set or the new one, never half.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/libvirt/libvirt_update.h"
#include "agent/journal/journal_store.h"
#include "agent/libvirt/qemu_wrapper_config.h"
#include "common/file_read.h"
#include "common/err.h"
#include "common/json_strict.h"

#define LIBVIRT_STATE_DEPTH 32	/* json-c's default */

_Static_assert(AGENT_URI_MAX == LIBVIRT_URI_MAX, "libvirt_uri is copied into libvirt_update");

int libvirt_update_init(struct libvirt_update *u, const char *uri, const char *state_file,
			char *err, size_t errlen)
{
	memset(u, 0, sizeof(*u));
	if ((uri && strlen(uri) >= sizeof(u->uri)) ||
	    (state_file && strlen(state_file) >= sizeof(u->state_file)))
		return kvmlu_err(err, errlen, -ENAMETOOLONG, "libvirt URI or state file too long");
	snprintf(u->uri, sizeof(u->uri), "%s", uri ? uri : LIBVIRT_DEFAULT_URI);
	u->required = uri != NULL;
	snprintf(u->state_file, sizeof(u->state_file), "%s",
		 state_file ? state_file : LIBVIRT_UPDATE_STATE_FILE);
	u->connect_wait_ms = LIBVIRT_UPDATE_CONNECT_WAIT_MS;
	snprintf(u->qemu_config, sizeof(u->qemu_config), "%s", AGENT_DEFAULT_QEMU_CONFIG);
	snprintf(u->save_dir, sizeof(u->save_dir), "%s", AGENT_DEFAULT_LIBVIRT_SAVE_DIR);
	return 0;
}

static int save_state(struct libvirt_update *u, char *err, size_t errlen)
{
	struct json_object *arr;
	char tmp[AGENT_PATH_MAX + 8], *slash;
	const char *text;
	bool any = false;
	FILE *f;
	int ret = 0;

	for (unsigned int i = 0; i < u->set.nr; i++)
		any |= u->set.d[i].state == LIBVIRT_DOMAIN_SAVED;
	if (!any)
		return 0;
	/* Its directory, one level (/var/lib/kvmlu), may not exist yet. */
	snprintf(tmp, sizeof(tmp), "%s", u->state_file);
	slash = strrchr(tmp, '/');
	if (slash && slash != tmp) {
		*slash = '\0';
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return kvmlu_err(err, errlen, -errno, "libvirt state dir %s: %s", tmp,
					 strerror(errno));
	}
	arr = libvirt_domains_to_json(&u->set);
	if (!arr)
		return kvmlu_err(err, errlen, -ENOMEM, "out of memory");
	text = json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN);
	snprintf(tmp, sizeof(tmp), "%s.new", u->state_file);
	f = fopen(tmp, "w");
	if (!f) {
		ret = kvmlu_err(err, errlen, -errno, "libvirt state %s: %s", tmp, strerror(errno));
		goto out_put;
	}
	/* On disk before the kexec: fsync, like the managed save images. */
	if (fputs(text, f) < 0 || fflush(f) || fsync(fileno(f)))
		ret = kvmlu_err(err, errlen, -EIO, "libvirt state %s: write failed", tmp);
	if (fclose(f) && !ret)
		ret = kvmlu_err(err, errlen, -EIO, "libvirt state %s: close failed", tmp);
	if (!ret && rename(tmp, u->state_file))
		ret = kvmlu_err(err, errlen, -errno, "libvirt state rename to %s: %s",
				u->state_file, strerror(errno));
	if (ret)
		unlink(tmp);
out_put:
	json_object_put(arr);
	return ret;
}

static int load_state(struct libvirt_update *u, char *err, size_t errlen)
{
	struct json_strict_error se;
	struct json_object *arr;
	char why[256], *text;
	size_t len;
	int ret;

	/*
	 * One file, written by us; still checked as strictly as the journal:
	 * it comes from disk. No bigger than a journal, which holds the same
	 * domains and more.
	 */
	ret = file_read_all(u->state_file, JOURNAL_MAX_BYTES, &text, &len);
	if (ret == -ENOENT)
		return ret;
	if (ret)
		return kvmlu_err(err, errlen, ret, "libvirt state %s: %s", u->state_file,
				 strerror(-ret));
	ret = json_strict_parse(text, len, LIBVIRT_STATE_DEPTH, 0, &arr, &se);
	free(text);
	if (ret)
		return kvmlu_err(err, errlen, ret, "libvirt state %s: %s%s", u->state_file,
				 se.fault == JSON_STRICT_DUPLICATE ? "" : "not JSON: ", se.desc);
	ret = libvirt_domains_from_json(arr, &u->set, why, sizeof(why));
	json_object_put(arr);
	if (ret)
		return kvmlu_err(err, errlen, ret, "libvirt state %s: %s", u->state_file, why);
	return 0;
}

/*
 * The mode into the set (open zeroes it); with ram_in_place kvmlu-qemu's
 * QMP directory from its configuration, which must be there: a domain in
 * place is driven over that socket.
 */
static int apply_mode(struct libvirt_update *u, char *err, size_t errlen)
{
	struct qemu_wrapper_config wcfg;
	char why[320];
	int ret;

	u->set.ram_refuse = u->ram_refuse;
	u->set.ram_in_place = u->ram_in_place;
	if (!u->ram_in_place)
		return 0;
	snprintf(u->set.save_dir, sizeof(u->set.save_dir), "%s", u->save_dir);
	ret = qemu_wrapper_config_load(u->qemu_config, &wcfg, why, sizeof(why));
	if (ret)
		return kvmlu_err(err, errlen, ret, "libvirt_ram keeps RAM in place, but kvmlu-qemu's "
				 "configuration %s: %s", u->qemu_config, why);
	_Static_assert(sizeof(u->set.qmp_dir) >= sizeof(wcfg.qmp_dir), "qmp_dir fits");
	memcpy(u->set.qmp_dir, wcfg.qmp_dir, sizeof(wcfg.qmp_dir));
	return 0;
}

/* The set as it is now, into the journal: the report shows each domain. */
static void record(struct journal *j, const struct libvirt_domains *s)
{
	journal_set_domains(j, s->d, s->nr);
}

int libvirt_update_preflight(void *ctx, struct journal *j, char *err, size_t errlen)
{
	struct libvirt_update *u = ctx;
	char why[512];
	int ret;

	/* Not reachable and not required: prepare notes it. */
	ret = libvirt_domains_open(&u->set, u->uri, why, sizeof(why));
	if (ret)
		return u->required ? kvmlu_err(err, errlen, ret, "%s", why) : 0;
	ret = apply_mode(u, err, errlen);
	if (!ret)
		ret = libvirt_domains_judge(&u->set, err, errlen);
	record(j, &u->set);
	libvirt_domains_close(&u->set);
	return ret;
}

int libvirt_update_prepare(void *ctx, struct journal *j, char *err, size_t errlen)
{
	struct libvirt_update *u = ctx;
	char why[512];
	int ret;

	ret = libvirt_domains_open(&u->set, u->uri, why, sizeof(why));
	if (ret) {
		if (u->required)
			return kvmlu_err(err, errlen, ret, "%s", why);
		journal_note(j, "libvirt: %.200s: no libvirt domains handled", why);
		return 0;
	}
	ret = apply_mode(u, err, errlen);
	if (ret) {
		libvirt_domains_close(&u->set);
		return ret;
	}
	u->prepared = true;
	ret = libvirt_domains_prepare(&u->set, j->dry_run, err, errlen);
	if (!ret && !j->dry_run) {
		ret = save_state(u, err, errlen);
		if (ret)
			libvirt_domains_rollback(&u->set, why, sizeof(why));
	}
	/* Also after a real save: the journal crossing the kexec lists them. */
	record(j, &u->set);
	if (ret || j->dry_run)
		libvirt_domains_close(&u->set);
	/* A real prepare keeps the connection for rollback. */
	return ret;
}

int libvirt_update_rollback(void *ctx, struct journal *j, char *err, size_t errlen)
{
	struct libvirt_update *u = ctx;
	int ret;

	if (!u->prepared)
		return 0;
	u->prepared = false;
	unlink(u->state_file);
	if (!u->set.conn)
		return 0;
	ret = libvirt_domains_rollback(&u->set, err, errlen);
	record(j, &u->set);
	libvirt_domains_close(&u->set);
	return ret;
}

int libvirt_update_restore(void *ctx, struct journal *j, char *err, size_t errlen)
{
	struct libvirt_update *u = ctx;
	char why[512];
	int ret;

	memset(&u->set, 0, sizeof(u->set));
	ret = load_state(u, err, errlen);
	if (ret == -ENOENT)
		return 0;	/* no libvirt domain was saved */
	if (ret)
		return ret;
	/* The journal lists the saved set even if libvirtd never answers: pending. */
	record(j, &u->set);
	snprintf(u->set.uri, sizeof(u->set.uri), "%s", u->uri);
	/*
	 * A domain whose RAM is in a LUO session needs kvmlu-qemu's QMP
	 * directory. Its session is retrieved only once libvirtd answers
	 * (below): until then it stays in the kernel, so that a later try (the
	 * agent restarted) still finds it.
	 */
	for (unsigned int i = 0; i < u->set.nr; i++)
		if (u->set.d[i].in_place && u->set.d[i].state == LIBVIRT_DOMAIN_SAVED) {
			u->ram_in_place = true;
			break;
		}
	/*
	 * Without kvmlu-qemu's configuration no such domain can start: all
	 * stay pending (sessions untaken, state file kept) until it is fixed
	 * and the agent restarted.
	 */
	if (u->ram_in_place) {
		ret = apply_mode(u, err, errlen);
		if (ret)
			return ret;
	}
	for (unsigned int waited = 0;; waited += 500) {
		ret = libvirt_domains_reconnect(&u->set, why, sizeof(why));
		if (!ret || waited >= u->connect_wait_ms)
			break;
		usleep(500 * 1000);
	}
	if (ret)
		return kvmlu_err(err, errlen, ret, "%s (after %u ms)", why, u->connect_wait_ms);
	ret = libvirt_domains_restore(&u->set, err, errlen);
	record(j, &u->set);
	libvirt_domains_close(&u->set);
	/*
	 * Every saved domain was tried: the report keeps each result and
	 * error. Kept only when libvirtd did not answer (above), so that the
	 * agent's next start tries again; trying a started domain again
	 * would find its image consumed and call it failed.
	 */
	unlink(u->state_file);
	return ret;
}

bool libvirt_update_pending(void *ctx)
{
	struct libvirt_update *u = ctx;

	return !access(u->state_file, F_OK);
}

static int provider_init(void *ctx, const struct agent_config *cfg)
{
	struct libvirt_update *u = ctx;
	int ret;

	ret = libvirt_update_init(u, cfg->libvirt_uri[0] ? cfg->libvirt_uri : NULL,
				  cfg->libvirt_state_file, NULL, 0);
	u->ram_refuse = cfg->libvirt_ram == AGENT_LIBVIRT_RAM_REFUSE ||
			cfg->libvirt_ram == AGENT_LIBVIRT_RAM_IN_PLACE;
	u->ram_in_place = cfg->libvirt_ram == AGENT_LIBVIRT_RAM_IN_PLACE ||
			  cfg->libvirt_ram == AGENT_LIBVIRT_RAM_IN_PLACE_OR_SAVE;
	snprintf(u->qemu_config, sizeof(u->qemu_config), "%s", cfg->qemu_config);
	if (strlen(cfg->libvirt_save_dir) >= sizeof(u->save_dir))
		return -ENAMETOOLONG;
	snprintf(u->save_dir, sizeof(u->save_dir), "%s", cfg->libvirt_save_dir);
	u->connect_wait_ms = cfg->libvirt_connect_ms;
	return ret;
}

const struct update_domains_provider libvirt_update_provider = {
	.ctx_size = sizeof(struct libvirt_update),
	.init = provider_init,
	.preflight = libvirt_update_preflight,
	.prepare = libvirt_update_prepare,
	.rollback = libvirt_update_rollback,
	.restore = libvirt_update_restore,
	.pending = libvirt_update_pending,
};

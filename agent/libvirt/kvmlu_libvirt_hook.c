// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-libvirt-hook: libvirt's qemu hook (installed as
 * /etc/libvirt/hooks/qemu.d/kvmlu, docs/libvirt.md). libvirt runs it as
 * `kvmlu <domain> <operation> <sub-operation> <extra>` with the domain XML
 * on stdin, while it holds the domain's lock.
 *
 * Lifecycle of one call: read stdin (bounded), check argv and the XML,
 * skip opted-out domains and operations the agent does not track, tell
 * the agent in one JSON line, exit. Never calls back into libvirt (that
 * deadlocks), never writes to stdout (for restore and migrate libvirt
 * takes stdout as replacement XML), and always exits 0: the hook reports,
 * it never vetoes a start. Unhappy paths, all logged to syslog and stderr:
 *   1. odd argv, malformed, hostile or huge XML: nothing is sent.
 *   2. the agent is down, slow or refuses: logged, libvirt goes on.
 *   3. anything hangs: SIGALRM after HOOK_DEADLINE_S ends the hook with 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "agent/config/agent_config.h"
#include "agent/libvirt/libvirt_hook_event.h"
#include "agent/libvirt/libvirt_hook_notify.h"
#include "agent/libvirt/libvirt_metadata.h"

#define HOOK_NAME		"kvmlu-libvirt-hook"
#define HOOK_AGENT_TIMEOUT_MS	1000
#define HOOK_DEADLINE_S		3
/* Past the XML limit stdin is still drained, up to this, so libvirt's write ends well. */
#define HOOK_DRAIN_MAX		(64 << 20)
/* Where the agent's socket path comes from; tests point it elsewhere. */
#define HOOK_CONFIG_ENV		"KVMLU_AGENT_CONFIG"

static void hook_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void hook_log(int prio, const char *fmt, ...)
{
	char line[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	syslog(prio, "%s", line);
	fprintf(stderr, HOOK_NAME ": %s\n", line);
}

static void on_deadline(int sig)
{
	static const char msg[] = HOOK_NAME ": deadline passed, exiting without waiting\n";

	(void)sig;
	/* Only async-signal-safe calls here. */
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(0);
	_exit(0);
}

/*
 * All of stdin into a buffer of at most LIBVIRT_XML_MAX + 1 bytes (one
 * more tells "too big"); the rest is read and dropped.
 */
static int read_stdin(char **out, size_t *len)
{
	size_t cap = LIBVIRT_XML_MAX + 1, have = 0, total = 0;
	char *buf = malloc(cap), sink[65536];
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		char *dst = have < cap ? buf + have : sink;
		size_t room = have < cap ? cap - have : sizeof(sink);

		n = read(STDIN_FILENO, dst, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -errno;
		}
		if (n == 0 || total + (size_t)n > HOOK_DRAIN_MAX)
			break;
		total += (size_t)n;
		if (dst != sink)
			have += (size_t)n;
	}
	*out = buf;
	/* have is at most LIBVIRT_XML_MAX + 1: too big is refused by the parse. */
	*len = have;
	return 0;
}

static int agent_socket(char *sock, size_t len)
{
	const char *path = getenv(HOOK_CONFIG_ENV);
	struct agent_config cfg;
	char err[256];
	int ret;

	agent_config_defaults(&cfg);
	ret = agent_config_load(path ? path : AGENT_CONFIG_DEFAULT_PATH, &cfg, err, sizeof(err));
	/* No config file: the agent runs on its defaults too. */
	if (ret && !(ret == -ENOENT && !path)) {
		hook_log(LOG_ERR, "agent config: %s", err);
		return ret;
	}
	snprintf(sock, len, "%s", cfg.socket_path);
	return 0;
}

int main(int argc, char **argv)
{
	struct libvirt_hook_event ev;
	char err[512], sock[AGENT_SOCK_PATH_MAX];
	char *xml = NULL;
	size_t len = 0;
	int ret;

	openlog(HOOK_NAME, LOG_PID, LOG_DAEMON);
	signal(SIGALRM, on_deadline);
	alarm(HOOK_DEADLINE_S);

	/* Read first: a hook that leaves early makes libvirt's write fail. */
	ret = read_stdin(&xml, &len);
	if (ret) {
		hook_log(LOG_ERR, "reading the domain XML on stdin: %s", strerror(-ret));
		return 0;
	}
	ret = libvirt_hook_event_parse_args(argc, argv, &ev, err, sizeof(err));
	if (ret) {
		hook_log(LOG_WARNING, "refused the call, nothing sent: %s", err);
		goto out;
	}
	ret = libvirt_hook_event_parse_xml(xml, len, &ev, err, sizeof(err));
	if (ret) {
		hook_log(LOG_WARNING, "domain %s %s: refused the XML, nothing sent: %s",
			 ev.domain, libvirt_hook_op_name(ev.op), err);
		goto out;
	}
	if (ev.optout) {
		hook_log(LOG_INFO, "domain %s %s %s: opted out (kvmlu:config optout=\"yes\"), nothing sent",
			 ev.domain, libvirt_hook_op_name(ev.op), ev.sub);
		goto out;
	}
	if (!libvirt_hook_op_reported(ev.op))
		goto out;
	if (agent_socket(sock, sizeof(sock)))
		goto out;
	ret = libvirt_hook_notify(sock, &ev, HOOK_AGENT_TIMEOUT_MS, err, sizeof(err));
	if (ret)
		hook_log(LOG_WARNING, "domain %s %s %s: agent not told: %s", ev.domain,
			 libvirt_hook_op_name(ev.op), ev.sub, err);
	else
		hook_log(LOG_INFO, "domain %s uuid %s %s %s %s: agent told", ev.domain, ev.uuid,
			 libvirt_hook_op_name(ev.op), ev.sub, ev.extra);
out:
	free(xml);
	closelog();
	return 0;
}

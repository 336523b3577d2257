/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration of kvmlu-qemu (/etc/kvmlu/qemu.json, or the file in
 * KVMLU_QEMU_CONFIG): which QEMU it runs and where kvmlu's QMP sockets
 * go. The QEMU path comes from here and never from the command line, so
 * the file decides what runs as every wrapped domain: keep it root's,
 * mode 0644. Parsing only, strict: unknown keys and keys given twice are
 * refused.
 *
 *   {"qemu": "/usr/bin/qemu-system-x86_64", "qmp_dir": "/run/kvmlu/lv",
 *    "lvram_socket": "/run/kvmlu/lvram.sock"}
 *
 * lvram_socket (optional, the default shown) is where the agent gives
 * back RAM it holds (agent/libvirt/lvram_server.h); kvmlu-agent reads
 * this same file to know it and qmp_dir.
 */
#ifndef KVMLU_LIBVIRT_QEMU_WRAPPER_CONFIG_H
#define KVMLU_LIBVIRT_QEMU_WRAPPER_CONFIG_H

#include <limits.h>
#include <stddef.h>

#define QEMU_WRAPPER_CONFIG_PATH	"/etc/kvmlu/qemu.json"
#define QEMU_WRAPPER_CONFIG_ENV		"KVMLU_QEMU_CONFIG"
#define QEMU_WRAPPER_QMP_DIR		"/run/kvmlu/lv"
#define QEMU_WRAPPER_LVRAM_SOCKET	"/run/kvmlu/lvram.sock"
#define QEMU_WRAPPER_CONFIG_MAX		(64 * 1024)	/* bytes of the file read */

struct qemu_wrapper_config {
	char qemu[PATH_MAX];		/* absolute */
	char qmp_dir[108];		/* absolute, no ',' (qemu_argv_check_qmp_dir) */
	char lvram_socket[108];		/* absolute */
};

/* text[0..len): 0 and cfg filled, or -EINVAL (err says why; cfg unchanged). */
int qemu_wrapper_config_parse(const char *text, size_t len, struct qemu_wrapper_config *cfg,
			      char *err, size_t errlen);

/* The file at path (at most QEMU_WRAPPER_CONFIG_MAX bytes), parsed as above. */
int qemu_wrapper_config_load(const char *path, struct qemu_wrapper_config *cfg,
			     char *err, size_t errlen);

#endif /* KVMLU_LIBVIRT_QEMU_WRAPPER_CONFIG_H */

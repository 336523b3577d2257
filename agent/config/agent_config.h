/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmlu-agent configuration: a JSON file (configs/agent.json is the
 * documented example). Read once at start; a key the agent does not know
 * or a value of the wrong type refuses the whole file, so a typo never
 * silently falls back to a default. Missing keys take the defaults below.
 */
#ifndef KVMLU_AGENT_CONFIG_H
#define KVMLU_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#define AGENT_CONFIG_DEFAULT_PATH	"/etc/kvmlu/agent.json"
#define AGENT_DEFAULT_SOCKET		"/run/kvmlu/agent.sock"
#define AGENT_DEFAULT_LIBVIRT_STATE	"/var/lib/kvmlu/libvirt-domains.json"
/* Where the system libvirtd (qemu:///system) keeps managed saves. */
#define AGENT_DEFAULT_LIBVIRT_SAVE_DIR	"/var/lib/libvirt/qemu/save"
/* kvmlu-qemu's configuration: its QMP directory and the lvram socket. */
#define AGENT_DEFAULT_QEMU_CONFIG	"/etc/kvmlu/qemu.json"
#define AGENT_PATH_MAX			256
/* sun_path holds 108 bytes including the NUL. */
#define AGENT_URI_MAX			256	/* = LIBVIRT_URI_MAX */
/* prepare_parallel at most: as many as a journal holds VMs (JOURNAL_MAX_VMS). */
#define AGENT_PREPARE_PARALLEL_MAX	64
/* max_clients at most: each connection is a thread and an fd. */
#define AGENT_MAX_CLIENTS_MAX		1024
#define AGENT_SOCK_PATH_MAX		sizeof(((struct sockaddr_un *)0)->sun_path)
/* kexec_dirs holds at most this many directories. */
#define AGENT_KEXEC_DIRS_MAX		8

/*
 * libvirt_ram: what an update does with a libvirt domain's RAM
 * (docs/libvirt.md): written to disk by a managed save, or kept in place
 * across the kexec where the domain allows it (docs/libvirt-ram-in-place.md).
 */
enum agent_libvirt_ram {
	AGENT_LIBVIRT_RAM_SAVE,		/* managed save (the default) */
	AGENT_LIBVIRT_RAM_REFUSE,	/* refuse the update before anything is paused */
	AGENT_LIBVIRT_RAM_IN_PLACE,	/* in place; refuse if a domain cannot */
	AGENT_LIBVIRT_RAM_IN_PLACE_OR_SAVE,	/* in place; managed save if one cannot */
};

struct agent_config {
	char socket_path[AGENT_SOCK_PATH_MAX];	/* the agent's own socket */
	char group[64];			/* besides root, who may use it */
	char run_dir[AGENT_PATH_MAX];	/* VMM control sockets: <vm>.sock */
	char history_dir[AGENT_PATH_MAX];	/* one report file per update */
	char state_dir[AGENT_PATH_MAX];	/* the on-disk journal copy */
	char vmm_binary[AGENT_PATH_MAX];	/* started for restore after kexec */
	char serial_dir[AGENT_PATH_MAX];	/* "" or restored VMMs' <vm>.serial */
	/* libvirt domains (libvirt_update.h): "" is qemu:///system, optional. */
	char libvirt_uri[AGENT_URI_MAX];
	char libvirt_state_file[AGENT_PATH_MAX];	/* on disk: read after the kexec */
	char qemu_config[AGENT_PATH_MAX];	/* kvmlu-qemu's (domain-replace-qemu) */
	char libvirt_save_dir[AGENT_PATH_MAX];	/* libvirt's managed saves (RAM in place) */
	enum agent_libvirt_ram libvirt_ram;
	unsigned int vmm_timeout_ms;	/* one request to a VMM */
	unsigned int prepare_timeout_ms;	/* prepare-update of one VM */
	unsigned int restore_timeout_ms;	/* one VM restored after kexec */
	unsigned int client_idle_ms;	/* a connection without a complete request line */
	unsigned int libvirt_connect_ms;	/* libvirtd answering after the kexec */
	unsigned int max_clients;	/* connections served at once; more get Busy */
	unsigned int history_keep;	/* reports kept in history_dir */
	unsigned int prepare_parallel;	/* VMs prepared at the same time */
	uint64_t min_free_bytes;	/* free memory preflight wants left */
	bool allow_kexec;		/* see agent/update/kexec_image.h */
	/*
	 * Where a kernel and initrd named by a group member (not root) must
	 * be (agent/update/kexec_files.h); no trailing '/'. Default /boot.
	 */
	unsigned int nr_kexec_dirs;
	char kexec_dirs[AGENT_KEXEC_DIRS_MAX][AGENT_PATH_MAX];
};

void agent_config_defaults(struct agent_config *c);

/*
 * What prepare-update may spend hashing RAM while the guest still runs
 * (its running_hash_ms): half of timeouts.prepare_ms. The more is hashed
 * before the pause, the shorter the blackout; the other half is left for
 * the pause, the state and the preserves.
 */
unsigned int agent_running_hash_ms(const struct agent_config *c);

/* Parse JSON text over the defaults; on error c is left unchanged. */
int agent_config_parse(const char *text, struct agent_config *c,
		       char *err, size_t errlen);

/* Read and parse a file; a missing file is an error (ENOENT). */
int agent_config_load(const char *path, struct agent_config *c,
		      char *err, size_t errlen);

#endif /* KVMLU_AGENT_CONFIG_H */

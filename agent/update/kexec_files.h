/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may kexec what. The agent runs as root and loads and jumps into the
 * kernel a client names; a member of the agent's group may run `kvmlu
 * host-update` but must not thereby get root to boot a file of their
 * own. So:
 *   - root (and the agent's own uid) may name any kernel and initrd;
 *   - anyone else only files under one of kexec_dirs (agent config,
 *     default /boot), reached without a symlink, "." or "..", where every
 *     directory from / down and the file itself are owned by root and not
 *     writable by group or others, and the file is a regular file.
 * The files are opened here once, and these fds are what kexec_file_load
 * reads (kexec_image_load_fds): the file checked is the file loaded, with
 * no window to swap it in between.
 */
#ifndef KVMLU_KEXEC_FILES_H
#define KVMLU_KEXEC_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "agent/config/agent_config.h"

struct kexec_files {
	int kernel_fd;		/* -1: not open */
	int initrd_fd;		/* -1: none */
};

#define KEXEC_FILES_NONE ((struct kexec_files){ .kernel_fd = -1, .initrd_fd = -1 })

/* Whether a peer with this uid may name any file (root, or the agent's own uid). */
bool kexec_files_trusted(uid_t peer_uid);

/*
 * Open kernel and initrd (NULL or "": none) for a peer trusted or not
 * (above). 0 and both fds in f, or -errno (-EPERM for a rule the file
 * breaks) with the file and the rule in err and nothing open.
 */
int kexec_files_open(const struct agent_config *c, bool trusted, const char *kernel,
		     const char *initrd, struct kexec_files *f, char *err, size_t errlen);

void kexec_files_close(struct kexec_files *f);

#endif /* KVMLU_KEXEC_FILES_H */

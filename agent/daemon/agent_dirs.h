/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The directories the agent's configuration names, made where missing.
 * /run is empty after every boot, a kexec included: the restore at boot
 * must not depend on a unit or a person having made run_dir, or a
 * restored VMM would have no directory for its control socket.
 */
#ifndef KVMLU_AGENT_DIRS_H
#define KVMLU_AGENT_DIRS_H

#include <stddef.h>

#include "agent/config/agent_config.h"

/*
 * mkdir -p of run_dir, state_dir, history_dir, serial_dir (if set) and the
 * socket's directory. 0, or the first failure with the directory named.
 */
int agent_dirs_make(const struct agent_config *cfg, char *err, size_t errlen);

#endif /* KVMLU_AGENT_DIRS_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libvirt's errors as the agent reports them: libvirt prints every error
 * to stderr by default, but the agent puts each into its own reply or
 * journal entry instead, with libvirt's last message.
 */
#ifndef KVMLU_AGENT_LIBVIRT_ERRORS_H
#define KVMLU_AGENT_LIBVIRT_ERRORS_H

/* Stop libvirt printing errors itself (for this thread's connections too). */
void libvirt_errors_quiet(void);

/* The last libvirt error's message, never NULL. */
const char *libvirt_last_error(void);

#endif /* KVMLU_AGENT_LIBVIRT_ERRORS_H */

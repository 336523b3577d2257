/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kvmlu-vmm command line:
 *   kvmlu-vmm run --name N --memory SIZE --cpus K
 *                 (--payload FILE | --kernel BZIMAGE [--initrd F] [--append S])
 *                 [--memory-backend memfd|guest_memfd] [--serial FILE] [--control SOCK]
 *                 [--control-idle-ms MS]
 *                 [--disk PATH[,readonly][,id=NAME]]...
 *                 [--net tap=NAME[,mac=MAC][,bridge=BR]]...
 *                 [--virtio-transport mmio|pci]
 *   kvmlu-vmm restore --session NAME [--control SOCK] [--control-idle-ms MS] [--serial FILE]
 *                     [--verify lazy|sync]
 *   kvmlu-vmm --help | --version
 * Parsed once in main(); every value is checked here so the rest of the
 * VMM only sees well-formed options. Nothing is opened or created.
 */
#ifndef KVMLU_VMM_OPTIONS_H
#define KVMLU_VMM_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "guestmem/guestmem.h"
#include "vmm/device_config.h"
#include "vmm/vm_config.h"

/* --disk may be given this often: one virtio-mmio slot each (vmm/vm_virtio.h). */
#define VMM_MAX_DISKS 8
/* --net may be given this often; disks and nets share the 8 virtio-mmio slots. */
#define VMM_MAX_NETS 4

enum vmm_command {
	VMM_CMD_NONE = 0,	/* --help / --version only */
	VMM_CMD_RUN,
	VMM_CMD_RESTORE,
};

struct vmm_options {
	enum vmm_command cmd;
	bool help;
	bool version;
	const char *name;
	uint64_t memory;		/* bytes */
	unsigned int cpus;
	const char *payload;
	const char *kernel;		/* Linux boot (vmm/boot/linux*) */
	const char *initrd;
	const char *append;
	enum guestmem_backend backend;
	const char *serial;		/* NULL: stdout */
	const char *control;		/* NULL: no control socket */
	unsigned int control_idle_ms;	/* 0: CONTROL_IDLE_MS_DEFAULT */
	const char *session;		/* restore: LUO session name */
	const char *verify;		/* restore: "lazy", "sync", NULL: default */
	/*
	 * The devices (vmm/device_config.h): each --disk and --net, of each
	 * kind in the order given, in slot order (disks, then NICs); no fds.
	 * Room for each kind's most, so that too many in all is said as such.
	 */
	unsigned int nr_devs;
	struct vm_device_config devs[VMM_MAX_DISKS + VMM_MAX_NETS];
	enum vm_virtio_transport transport;	/* --virtio-transport; default pci */
};

/*
 * Parse argv (argv[0] is the program). 0 on success (check help/version
 * first), -EINVAL with a one-line reason in err otherwise. Pointers in
 * opts point into argv.
 */
int vmm_options_parse(int argc, char **argv, struct vmm_options *opts,
		      char *err, size_t errlen);

void vmm_options_usage(FILE *f, const char *prog);

/* [A-Za-z0-9][A-Za-z0-9._-]{0,62}: safe in paths and LUO session names. */
bool vmm_options_name_valid(const char *name);

#endif /* KVMLU_VMM_OPTIONS_H */

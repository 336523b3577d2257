// SPDX-License-Identifier: GPL-2.0
/*
 * kvmlu-vmm: one process per VM. main() is the only place that prints
 * the final error and decides the exit status; everything below it
 * returns 0 or -errno with its message in a buffer.
 *
 * Lifecycle of `run`: parse options, open the serial output, build the
 * VM, boot the payload, open the control socket, start the vCPUs, then
 * wait until a stop is requested (guest, control socket, SIGTERM/SIGINT).
 * Then join the vCPUs, close the control socket, tear the VM down.
 *
 * Exit status: 0 clean stop (shutdown command, SIGTERM/SIGINT, guest
 * power-off); 1 setup or VMM failure; 64 bad command line; 10 guest
 * triple fault; 11 guest reset; 12 guest crash; 13 KVM internal error;
 * 14 KVM entry failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "kvmlu/version.h"
#include "vmm/boot/linux_boot.h"
#include "vmm/boot/payload_boot.h"
#include "vmm/control/server.h"
#include "vmm/live_update/live_update.h"
#include "vmm/options.h"
#include "vmm/upgrade/incoming.h"
#include "vmm/upgrade/upgrade.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/main/vm_commands.h"
#include "vmm/control/vmm_process.h"

#define EXIT_USAGE 64

static int vmm_run(const struct vmm_options *o, int sig_fd)
{
	struct vm_config cfg = {
		.name = o->name, .ram_size = o->memory, .nr_vcpus = o->cpus,
		.backend = o->backend, .serial_fd = STDOUT_FILENO,
		.devs = o->devs, .nr_devs = o->nr_devs, .transport = o->transport,
	};
	struct control_server server;
	struct control_ctx ctx = { 0 };
	char err[512] = "";
	int serial_fd = -1, rc, status = 1;
	struct vm vm;

	control_server_init(&server);
	if (o->serial) {
		serial_fd = open(o->serial, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
		if (serial_fd < 0) {
			fprintf(stderr, "kvmlu-vmm: --serial %s: %s\n", o->serial, strerror(errno));
			return 1;
		}
		cfg.serial_fd = serial_fd;
	}
	rc = vm_create(&vm, &cfg, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "kvmlu-vmm: %s: create VM: %s\n", o->name, err);
		goto out_serial;
	}
	if (o->kernel)
		rc = linux_boot(&vm, o->kernel, o->initrd, o->append, err, sizeof(err));
	else
		rc = payload_boot(&vm, o->payload, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "kvmlu-vmm: %s: %s\n", o->name, err);
		goto out_vm;
	}
	ctx.vm = &vm;
	ctx.listen_fd = -1;
	if (o->control) {
		rc = control_server_start(&server, o->control, &ctx, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "kvmlu-vmm: %s: control socket: %s\n", o->name, err);
			goto out_vm;
		}
		ctx.listen_fd = server.listen_fd;
		ctx.control_path = o->control;
	}
	rc = vm_start(&vm, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "kvmlu-vmm: %s: start: %s\n", o->name, err);
		vm_request_stop(&vm, VM_STOP_VMM_ERROR, "start failed: %s", err);
	}
	status = vmm_serve(&vm, sig_fd, &server);
out_vm:
	vm_destroy(&vm);
out_serial:
	if (serial_fd >= 0)
		close(serial_fd);
	return status;
}

int main(int argc, char **argv)
{
	struct vmm_options o;
	char err[512] = "";
	const char *base;
	int sig_fd, status;

	/*
	 * The process name (ps -C, pidof, top) from argv[0]: a live upgrade
	 * execs /proc/self/exe, which the kernel would name "exe".
	 */
	base = argc > 0 ? argv[0] : "";
	if (strrchr(base, '/'))
		base = strrchr(base, '/') + 1;
	if (base[0])
		(void)prctl(PR_SET_NAME, base, 0, 0, 0);

	/*
	 * Every entry point serves the same commands; each owner registers
	 * its own, before any control server starts.
	 */
	if (vm_commands_register() || upgrade_register_commands(live_update_prepared) ||
	    live_update_register_commands()) {
		fprintf(stderr, "kvmlu-vmm: control commands: a name is registered twice\n");
		return 1;
	}
	/* Hidden: the receiving end of a live upgrade, started by vmm/upgrade/upgrade.c. */
	if (argc > 1 && !strcmp(argv[1], "incoming"))
		return vmm_incoming_main(argc, argv);
	if (vmm_options_parse(argc, argv, &o, err, sizeof(err))) {
		fprintf(stderr, "kvmlu-vmm: %s\n", err);
		return EXIT_USAGE;
	}
	if (o.help) {
		vmm_options_usage(stdout, "kvmlu-vmm");
		return 0;
	}
	if (o.version) {
		printf("kvmlu-vmm %s\n", KVMLU_VERSION);
		return 0;
	}
	if (o.control_idle_ms)
		control_server_set_idle_ms(o.control_idle_ms);
	if (o.cmd == VMM_CMD_RESTORE)	/* after a host kexec: vmm/live_update/restore_main.c */
		return live_update_restore_main(o.session, o.control, o.serial, o.verify);

	/*
	 * Every thread inherits this mask: termination signals arrive only
	 * through the signalfd, the kick signal only in vCPU threads.
	 */
	sig_fd = vmm_signals_setup();
	if (sig_fd < 0) {
		fprintf(stderr, "kvmlu-vmm: signal setup: %s\n", strerror(errno));
		return 1;
	}
	status = vmm_run(&o, sig_fd);
	close(sig_fd);
	return status;
}

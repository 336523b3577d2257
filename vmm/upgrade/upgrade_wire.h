/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The messages between an upgrading kvmlu-vmm (vmm/upgrade/upgrade.c) and the
 * new process it started (vmm/upgrade/incoming.c), over a SOCK_SEQPACKET
 * socketpair, each a JSON object with fds attached (common/fd_pass.h):
 *
 *   old -> new  {"msg":"prepare","name":"vm1","ram_size":N,"nr_vcpus":K,
 *                "backend":"memfd","serial_fd":0,"listen_fd":1,
 *                "control_path":"...","region_fds":[2,...],
 *                "disks":[{"fd":3,"path":"/abs","readonly":false,"id":"root",
 *                          "dev":N,"ino":N,"size":N},...],
 *                "nets":[{"fd":4,"tap":"tap0","bridge":"br0","mac":"52:54:..."},...],
 *                "verify_timeout_ms":N,"control_idle_ms":N}
 *               + fds: the UART output, the listening control socket
 *               (optional), one per RAM region in memory-map order, one
 *               per virtio-blk disk in slot order (the open disk itself:
 *               the new process never reopens a path, and checks the fd
 *               is the file dev/ino/size name), one per virtio-net NIC
 *               after them (its tap: the interface, its bridge port and
 *               the frames queued in it stay; the new process checks the
 *               fd is that tap and never reopens the name)
 *   new -> old  {"msg":"ready"}: VM built, waiting for its state
 *   old -> new  {"msg":"state","state_fd":0,"run":true} + the sealed state
 *               memfd (the VM is paused from now on; "run": whether it ran
 *               before the upgrade, i.e. whether to run it after commit)
 *   new -> old  {"msg":"restored"}: state restored, no vCPU started
 *   old -> new  {"msg":"commit"}: THE commit point. Only sent in time;
 *               before it only the old process may run the guest, after
 *               it only the new one
 *   new -> old  {"msg":"resumed","memory_copied_bytes":N,"memory":"shared",
 *                "prepare_ms":x,"create_ms":c,"restore_ms":y,
 *                "steps":{"build_ns":N,"verify_ns":N,"apply_ns":N,"start_ns":N}}
 *               once the VM runs (or sits parked, "run":false) in the new
 *               process; steps: the resume pipeline's (vmm/resume/resume.h)
 *   new -> old  {"msg":"error","desc":"...","lost":false} instead, at any
 *               step; "lost":true after commit (the VM runs nowhere).
 *
 * Anything else (EOF, a bad message, a timeout) before commit counts as
 * a failure: the old process kills the new one (which never ran the
 * guest) and resumes the VM itself. The new process takes anything but
 * "commit" (EOF included) as the end: it exits without running a vCPU.
 * After commit the old process never resumes the VM.
 */
#ifndef KVMLU_VMM_UPGRADE_WIRE_H
#define KVMLU_VMM_UPGRADE_WIRE_H

#include <stddef.h>

#include <json-c/json.h>

/* state, serial, listen + regions + disks and NICs (8 virtio devices in all) */
#define UPGRADE_WIRE_MAX_FDS	(3 + 8 + 8)
#define UPGRADE_WIRE_MAX_JSON	(48u << 10)	/* 8 disk paths of up to PATH_MAX */

/* Send obj (consumed) with nfds fds as one message. */
int upgrade_wire_send(int sock, json_object *obj, const int *fds, unsigned int nfds,
		      char *err, size_t errlen);

/*
 * Receive one message; *obj is the parsed object (json_object_put() it),
 * fds[] and *nfds what arrived (the caller owns and closes them).
 */
int upgrade_wire_recv(int sock, json_object **obj, int *fds, unsigned int max_fds,
		      unsigned int *nfds, char *err, size_t errlen);

#endif /* KVMLU_VMM_UPGRADE_WIRE_H */

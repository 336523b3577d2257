#!/usr/bin/python3
"""Watches one harness QEMU over QMP; run by run-case.sh, and by
tests/bench/bench_upgrade.sh when its QEMU host falls silent (DEADLINE 0).

QEMU runs with -action reboot=shutdown,shutdown=pause, so a reset the
guest asks for (a triple fault of the QEMU host's kernel, or the reboot
after a panic) pauses the machine instead of ending QEMU. This script then
writes the vCPUs' registers as they were at that moment (HMP "info
registers -a", and the code at each vCPU's rip) to OUT, and quits QEMU.
Under -no-reboot the triple fault left only "Triple fault" in QEMU's log:
a QEMU host's own fault could not be looked at.

A case that hangs is killed by run-case.sh's timeout, which used to
leave nothing to say where the host was. Given DEADLINE (seconds from
now, a little before that timeout), this script then writes the
registers three times, a second apart (is the host's kernel stuck in one
place, or busy?), and leaves QEMU to the timeout.

Usage: qmp_watch.py SOCKET OUT [DEADLINE]
Exits 0 when QEMU is gone, whatever happened; it never keeps QEMU alive.
"""
import json
import re
import select
import socket
import sys
import time


def connect(path, seconds=60):
    end = time.time() + seconds
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.time() > end:
                return None
            time.sleep(0.2)


class Deadline(Exception):
    pass


class Qmp:
    def __init__(self, sock, deadline=None):
        self.sock = sock
        self.buf = b""
        self.deadline = deadline

    def read(self):
        """One message; Deadline if none came before the deadline."""
        while b"\n" not in self.buf:
            wait = None
            if self.deadline is not None:
                wait = self.deadline - time.time()
                if wait <= 0:
                    raise Deadline
            if not select.select([self.sock], [], [], wait)[0]:
                raise Deadline
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, name, **args):
        self.sock.sendall((json.dumps({"execute": name, "arguments": args}) + "\n").encode())
        self.deadline = None  # a command's reply is waited for, always
        while True:
            m = self.read()
            if "return" in m or "error" in m:
                return m

    def hmp(self, line, cpu=None):
        args = {"command-line": line}
        if cpu is not None:
            args["cpu-index"] = cpu
        m = self.cmd("human-monitor-command", **args)
        return m.get("return", json.dumps(m.get("error")))


def dump(q, out, why="when its kernel asked for a reset"):
    """Writes the registers, code and local APIC of every vCPU; returns
    the registers' text and vCPU 0's local APIC text."""
    regs = q.hmp("info registers -a")
    lapic0 = ""
    with open(out, "a", encoding="utf-8") as f:
        f.write("=== the QEMU host's vCPUs %s\n" % why)
        f.write(regs)
        # The code each vCPU was at: "x/6i" uses that vCPU's own paging.
        cpus = [int(l.split("CPU #", 1)[1].split(":", 1)[0])
                for l in q.hmp("info cpus").splitlines() if "CPU #" in l]
        for c in cpus:
            f.write("=== vCPU %d: code at rip\n" % c)
            f.write(q.hmp("x/6i $pc", cpu=c))
            # The host kernel's local APIC: a timer interrupt waiting in
            # IRR across samples means its CPU never took it (is the host
            # stuck in a nested guest?), an empty IRR that it is idle or busy.
            lapic = q.hmp("info lapic", cpu=c)
            f.write("=== vCPU %d: local APIC\n" % c)
            f.write(lapic)
            lapic0 = lapic0 or lapic
    return regs, lapic0


def lapic_irr(text):
    """The IRR line of HMP "info lapic": the vectors waiting, or "(none)"."""
    for line in text.splitlines():
        if line.startswith("IRR"):
            parts = line.split(None, 1)
            return parts[1].strip() if len(parts) > 1 else ""
    return "?"


def stuck_check(q, out):
    """Three samples a few seconds apart, an NMI sent after the first.

    The hang it looks for: the host's CPU runs its nested guest's spin loop and
    never leaves it, its own timer interrupt waiting in IRR and an NMI not
    taken either (global interrupts off inside guest mode, which hardware
    never does with the INTR and NMI intercepts KVM sets). Said in one
    line, so a timeout of that kind is told from a slow case at a glance.
    """
    samples = []
    for i in range(3):
        regs, lapic = dump(q, out, "near the case's timeout or after a silence (sample %d of 3)" % (i + 1))
        m = re.search(r"[RE]IP=(\S+)", regs)
        samples.append((m.group(1) if m else "?", lapic_irr(lapic)))
        if i == 0:
            q.cmd("inject-nmi")
        time.sleep(2)
    rips = {r for r, _ in samples}
    irrs = {i for _, i in samples}
    with open(out, "a", encoding="utf-8") as f:
        if len(rips) == 1 and len(irrs) == 1 and samples[0][1] not in ("", "(none)", "?"):
            f.write("=== stuck: rip %s and IRR %s (waiting) in every sample, before "
                    "and after an NMI: the QEMU host's CPU takes no interrupts "
                    "(emulator; tests/harness/README.md)\n"
                    % (samples[0][0], samples[0][1]))
        else:
            f.write("=== not stuck that way: rip %s, IRR %s\n"
                    % (" ".join(r for r, _ in samples), " / ".join(i for _, i in samples)))


def main():
    path, out = sys.argv[1], sys.argv[2]
    deadline = time.time() + float(sys.argv[3]) if len(sys.argv) > 3 else None
    s = connect(path)
    if s is None:
        return 0
    q = Qmp(s)
    try:
        q.read()  # greeting
        q.cmd("qmp_capabilities")
        q.deadline = deadline
        while True:
            try:
                m = q.read()
            except Deadline:
                stuck_check(q, out)
                q.deadline = None
                continue
            if m.get("event") != "SHUTDOWN":
                continue
            if m.get("data", {}).get("reason") == "guest-reset":
                try:
                    dump(q, out)
                except (OSError, ValueError) as e:
                    with open(out, "a", encoding="utf-8") as f:
                        f.write("qmp_watch: no register dump: %s\n" % e)
            q.cmd("quit")
    except (EOFError, OSError, ValueError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The shipped systemd units (configs/*.service) against what their
programs do at boot:

- kvmlu-restore.service runs `kvmlu-agent --restore` and is ordered
  before libvirtd.service and virtqemud.service (the VMs come back before
  any other VM service), so it must not be the unit that starts libvirt
  domains: libvirtd cannot start until it ends. Its code path is checked
  too: `--restore` returns in agent/daemon/agent_main.c before the libvirt
  provider is registered, and update_machine_resume() (with its steps)
  never calls ops->domains_restore.
- the unit that starts the libvirt domains (kvmlu-agent without
  `--restore`: agent_commands_restore_domains) is ordered After=
  libvirtd.service and virtqemud.service and neither Requires nor Wants
  them (a host without libvirt has no such unit).
- every unit named in an ordering of a shipped unit and starting with
  kvmlu- is shipped; README.md and docs/agent.md install every shipped
  unit and enable each one that has an [Install] section; the ansible
  role names no unit that is not shipped.

Exit 0 when all hold, 1 with one line per fault.
"""

import glob
import os
import re
import sys

LIBVIRT_UNITS = ("libvirtd.service", "virtqemud.service")
PULLING = ("Requires", "Wants", "BindsTo", "Requisite", "Upholds", "PartOf")


def parse_unit(path):
    """{section: {key: [values, split on blanks]}} of a systemd unit file."""
    sections, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                cur = sections.setdefault(line[1:-1], {})
                continue
            if cur is None or "=" not in line:
                raise ValueError("%s: not a unit line: %r" % (path, line))
            key, val = line.split("=", 1)
            cur.setdefault(key.strip(), []).extend(val.split())
    return sections


def exec_start(unit):
    return " ".join(unit.get("Service", {}).get("ExecStart", []))


def runs_agent(unit):
    return re.search(r"(^|/)kvmlu-agent(\s|$)", exec_start(unit)) is not None


def c_function(text, name):
    """The body of C function name (from its definition to the closing brace at column 0)."""
    m = re.search(r"^[a-z].*\b%s\([^;{]*\)\s*\{\n(.*?)^\}" % re.escape(name), text,
                  re.M | re.S)
    return m.group(1) if m else None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    faults = []
    paths = sorted(glob.glob(os.path.join(root, "configs", "*.service")))
    units = {os.path.basename(p): parse_unit(p) for p in paths}

    restore = units.get("kvmlu-restore.service")
    if not restore:
        faults.append("configs/kvmlu-restore.service is missing")
    else:
        u = restore.get("Unit", {})
        if not runs_agent(restore) or "--restore" not in exec_start(restore).split():
            faults.append("kvmlu-restore.service does not run kvmlu-agent --restore")
        for lv in LIBVIRT_UNITS:
            if lv not in u.get("Before", []):
                faults.append("kvmlu-restore.service is not Before=%s: the VMs must come back before other VM services" % lv)
            if lv in u.get("After", []):
                faults.append("kvmlu-restore.service is After=%s" % lv)

    # The units that start the libvirt domains: the agent's daemon mode.
    domain_units = [n for n, un in units.items()
                    if runs_agent(un) and "--restore" not in exec_start(un).split()]
    if not domain_units:
        faults.append("no shipped unit runs the kvmlu-agent daemon, which starts the pending libvirt domains")
    if "kvmlu-restore.service" in domain_units:
        faults.append("kvmlu-restore.service starts libvirt domains")
    for n in domain_units:
        u = units[n].get("Unit", {})
        for lv in LIBVIRT_UNITS:
            if lv not in u.get("After", []):
                faults.append("%s starts the pending libvirt domains but is not After=%s" % (n, lv))
            if lv in u.get("Before", []):
                faults.append("%s is Before=%s" % (n, lv))
            for k in PULLING:
                if lv in u.get(k, []):
                    faults.append("%s has %s=%s: a host without libvirt must not need it" % (n, k, lv))

    # --restore's code path has no libvirt in it.
    with open(os.path.join(root, "agent/daemon/agent_main.c"), encoding="utf-8") as f:
        main_c = f.read()
    ret_restore = main_c.find("return restore(&cfg);")
    set_domains = main_c.find("update_ops_host_set_domains(&libvirt_update_provider)")
    if ret_restore < 0 or set_domains < 0 or set_domains < ret_restore:
        faults.append("agent_main.c: the libvirt provider is registered before --restore returns")
    with open(os.path.join(root, "agent/update/update_machine.c"), encoding="utf-8") as f:
        machine_c = f.read()
    for fn in ("update_machine_resume", "step_restore", "step_verify"):
        body = c_function(machine_c, fn)
        if body is None:
            faults.append("update_machine.c: no function %s" % fn)
        elif "domains_restore" in body:
            faults.append("update_machine.c: %s (run by --restore, before libvirtd) calls domains_restore" % fn)

    # Ordering names of our own units point at shipped units.
    for n, un in units.items():
        for k, vals in un.get("Unit", {}).items():
            for v in vals:
                if v.startswith("kvmlu-") and v.endswith(".service") and v not in units:
                    faults.append("%s: %s=%s is not shipped in configs/" % (n, k, v))

    # Installed and enabled where the install steps are written down.
    for doc in ("README.md", "docs/agent.md"):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        installs = [l for l in text.splitlines()
                    if re.search(r"\binstall\b.*\.service\b.*/etc/systemd/system/", l)]
        enables = " ".join(l for l in text.splitlines() if "systemctl enable" in l)
        for n, un in units.items():
            if not any("configs/" + n in l for l in installs):
                faults.append("%s does not install configs/%s" % (doc, n))
            if "Install" in un and not re.search(r"\b%s\b" % re.escape(n), enables):
                faults.append("%s does not enable %s" % (doc, n))

    for path in glob.glob(os.path.join(root, "ansible", "**", "*"), recursive=True):
        if not os.path.isfile(path) or path.endswith((".pyc",)):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for name in set(re.findall(r"\bkvmlu-[a-z-]+\.service\b", f.read())):
                if name not in units:
                    faults.append("%s names %s, which configs/ does not ship" %
                                  (os.path.relpath(path, root), name))

    for fault in faults:
        print("FAULT: " + fault)
    if not faults:
        print("ok: %d units; libvirt domains started by %s" % (len(units), ", ".join(domain_units)))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())

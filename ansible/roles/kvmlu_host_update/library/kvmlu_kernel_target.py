#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Whether a host already runs the kernel a kvmlu host update would give it.

Runs on the managed host. The kernel image names its own build in the
x86 boot header ("7.3.4 (user@host) #1 SMP ... 2026"), the same words the
running kernel prints in /proc/version; the command line is compared too
when the update sets one. This is what makes the role idempotent: a host
on its target reports changed=false and is left alone. The image is
untrusted input: anything that is not a readable bzImage header is simply
"not the target" and the agent's preflight then says what is wrong.
"""

import re

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: kvmlu_kernel_target
short_description: Does the host run this kernel (and command line) already?
options:
  kernel:
    description: The kernel image (x86 bzImage) the update would load.
    type: path
    required: true
  append:
    description: The command line the update would give it; "" keeps the running one.
    type: str
    default: ""
"""

RETURN = r"""
on_target: {description: the running kernel is this image's build (and command line), type: bool}
why: {description: why not, "" when on_target, type: str}
running: {description: /proc/version, type: str}
target: {description: the image's version string, "" when unreadable, type: str}
boot_id: {description: /proc/sys/kernel/random/boot_id, type: str}
"""

SETUP_BYTES = 0x10000	# the real-mode setup code (at most 64 sectors) and more
HDRS_AT = 0x202		# "HdrS": the boot protocol header is there
VERSION_PTR_AT = 0x20E	# kernel_version: the string's offset - 0x200
VERSION_MAX = 256


def image_version(path):
    """The version string of a bzImage, or "" when there is none."""
    try:
        with open(path, "rb") as f:
            head = f.read(SETUP_BYTES)
    except OSError:
        return ""
    if len(head) < VERSION_PTR_AT + 2 or head[HDRS_AT:HDRS_AT + 4] != b"HdrS":
        return ""
    ptr = int.from_bytes(head[VERSION_PTR_AT:VERSION_PTR_AT + 2], "little")
    start = ptr + 0x200
    end = head.find(b"\0", start, start + VERSION_MAX)
    if ptr == 0 or end <= start:
        return ""
    text = head[start:end].decode("ascii", "replace")
    return text if text.isprintable() else ""


def runs_build(proc_version, image):
    """True when /proc/version is the build the image string names.

    Image: "RELEASE (USER@HOST) UTS_VERSION"; /proc/version:
    "Linux version RELEASE (USER@HOST) (COMPILER) UTS_VERSION".
    """
    m = re.match(r"(\S+) (\([^)]*\)) (#.*)$", image)
    if not m:
        return False
    release, builder, uts = m.groups()
    line = proc_version.rstrip("\n")
    return line.startswith("Linux version %s %s " % (release, builder)) and line.endswith(" " + uts)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def main():
    module = AnsibleModule(
        argument_spec=dict(kernel=dict(type="path", required=True),
                           append=dict(type="str", default="")),
        supports_check_mode=True)
    kernel, append = module.params["kernel"], module.params["append"]
    running = read("/proc/version").strip()
    target = image_version(kernel)
    cmdline = " ".join(read("/proc/cmdline").split())
    why = ""
    if not target:
        why = "%s has no readable x86 kernel version" % kernel
    elif not runs_build(running, target):
        why = "running %s, %s is %s" % (running, kernel, target)
    elif append and " ".join(append.split()) != cmdline:
        why = "running command line differs: %s" % cmdline
    module.exit_json(changed=False, on_target=not why, why=why, running=running,
                     target=target, cmdline=cmdline,
                     boot_id=read("/proc/sys/kernel/random/boot_id").strip())


if __name__ == "__main__":
    main()

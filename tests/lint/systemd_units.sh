#!/bin/bash
# lint/systemd_units: the shipped systemd units restore the kvmlu-vmm VMs
# before libvirtd and start the libvirt domains after it, and are
# installed where the install steps are written (tests/lint/systemd_units.py).
set -u
cd "$(dirname "$0")/../.."
exec python3 tests/lint/systemd_units.py .

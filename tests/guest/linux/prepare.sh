#!/bin/bash
# The Linux guest of the tests, ready to use: Debian's cloud kernel
# fetched (fetch-kernel.sh) and the test initramfs built
# (build-initramfs.sh), both cached, so a second call costs seconds.
# Silent on success; otherwise prints why in one line and exits with the
# failing script's status (77: offline, or no busybox-static).
here=$(dirname "$0")
out=$("$here/fetch-kernel.sh" 2>&1) && out=$("$here/build-initramfs.sh" 2>&1) && exit 0
rc=$?
echo "$out" | tail -n 1
exit $rc

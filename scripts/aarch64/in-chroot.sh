#!/usr/bin/env bash
# Runs a command in the aarch64 build's amd64 chroot (the cross compiler), with /proc and /dev
# mounted for it and unmounted after, holding the cache's lock so no build runs meanwhile. For
# tests that use the cross toolchain (the aarch64 relink kit). As root.
# Usage: scripts/aarch64/in-chroot.sh CMD [ARG...]   (paths as seen inside the chroot)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/common.sh"
[[ -x $AMD64/usr/libexec/swift/bin/swift-frontend ]] || { echo "aarch64: no cross toolchain in $AMD64 (make static-aarch64)" >&2; exit 1; }
take_lock
trap unmount_all EXIT
mount_chroot "$AMD64"
in_amd64 "$@"

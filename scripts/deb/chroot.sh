#!/usr/bin/env bash
# The Debian 12 chroots the package tests install into, made once with debootstrap and cached.
#
#   scripts/deb/chroot.sh base ARCH [systemd]        make (if missing) the cached base, print
#                                                    its path
#   scripts/deb/chroot.sh copy ARCH DEST [systemd]   a fresh copy of the base in DEST (each run
#                                                    starts clean: a test never sees a previous
#                                                    run's user or state directory)
#
# "systemd" is a second base with the systemd package installed (not running): there the
# postinst takes the systemd-sysusers path instead of the adduser fallback.
#
# Cache: ${OPENCARKEY_DEB_CHROOT:-/var/cache/opencarkey-deb-chroot}/bookworm-ARCH[-systemd]. A base is
# complete only once its ".complete" stamp exists, so an interrupted debootstrap is redone
# instead of being trusted. The base is minbase plus adduser (the package's dependency, not in
# minbase): installing with plain dpkg then needs no network. arm64 needs qemu-user-static and
# binfmt-support (debootstrap runs its second stage through qemu-aarch64-static).
set -euo pipefail

cache=${OPENCARKEY_DEB_CHROOT:-/var/cache/opencarkey-deb-chroot}
mirror=${OPENCARKEY_DEB_MIRROR:-http://deb.debian.org/debian}

base() { # ARCH [systemd]
    local arch=$1 flavour=${2:-} dir=$cache/bookworm-$1 include=adduser
    case $flavour in
    "") ;;
    systemd) dir+=-systemd include+=,systemd ;;
    *) echo "deb-chroot: unknown flavour $flavour" >&2; exit 2 ;;
    esac
    if [[ ! -e $dir/.complete ]]; then
        rm -rf "$dir"
        mkdir -p "$cache"
        local log=$cache/debootstrap-$(basename "$dir").log
        echo "deb-chroot: debootstrap bookworm $arch into $dir (once; cached)" >&2
        debootstrap --variant=minbase --arch="$arch" --include="$include" \
            bookworm "$dir" "$mirror" >"$log" 2>&1 || {
            echo "deb-chroot: debootstrap failed, log: $log" >&2
            tail -n 20 "$log" >&2
            exit 1
        }
        # No daemons may start inside the chroot (policy-rc.d 101 = action forbidden).
        printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
        chmod 0755 "$dir/usr/sbin/policy-rc.d"
        touch "$dir/.complete"
    fi
    echo "$dir"
}

case ${1:-} in
base)
    [[ $# -eq 2 || $# -eq 3 ]] || { echo "usage: $0 base ARCH [systemd]" >&2; exit 2; }
    base "$2" "${3:-}"
    ;;
copy)
    [[ $# -eq 3 || $# -eq 4 ]] || { echo "usage: $0 copy ARCH DEST [systemd]" >&2; exit 2; }
    src=$(base "$2" "${4:-}")
    rm -rf "$3"
    mkdir -p "$(dirname "$3")"
    cp -a "$src" "$3"
    rm -f "$3/.complete"
    ;;
*)
    echo "usage: $0 base ARCH [systemd] | copy ARCH DEST [systemd]" >&2
    exit 2
    ;;
esac

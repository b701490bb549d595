#!/usr/bin/env bash
# Builds and tests the committed tree with Swift 6.0 (Debian trixie's swiftlang 6.0.3, the
# toolchain the aarch64 build uses), in a trixie chroot made with debootstrap. Catches
# language features newer than 6.0 and differences in type inference (typed throws).
#
# trixie ships libgpiod's v2 API; the agent uses v1.6 (bookworm), so bookworm's header and
# library are copied into the chroot for this check.
#
# Usage (as root): scripts/check-swift60.sh [CHROOT]   (default /opt/trixie-chroot, reused)
set -euo pipefail
root=${1:-/opt/trixie-chroot}
repo=$(git rev-parse --show-toplevel)
shared=${OPENCARKEY_SHARED:-$repo/../shared}

if [ ! -x "$root/usr/bin/swift" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
    [ -d "$root/usr" ] || debootstrap --variant=minbase --include=ca-certificates trixie "$root" http://deb.debian.org/debian
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\n' \
        > "$root/etc/apt/sources.list.d/debian.sources"
    chroot "$root" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        swiftlang libssl-dev libmosquitto-dev libgpiod-dev libbluetooth-dev libsqlite3-dev pkg-config mosquitto mosquitto-clients openssl" >/dev/null
    cp /usr/include/gpiod.h "$root/usr/include/gpiod.h"
    cp -a /usr/lib/x86_64-linux-gnu/libgpiod.so.2* "$root/usr/lib/x86_64-linux-gnu/"
    ln -sf libgpiod.so.2 "$root/usr/lib/x86_64-linux-gnu/libgpiod.so"
fi

rm -rf "$root/src" "$root/shared" && mkdir -p "$root/src" "$root/shared"
git -C "$repo" archive HEAD | tar -x -C "$root/src"
cp -r "$shared/testdata" "$root/shared/"
for fs in proc dev dev/pts; do mountpoint -q "$root/$fs" || mount --bind "/$fs" "$root/$fs"; done
trap 'for fs in dev/pts dev proc; do umount "$root/$fs" 2>/dev/null || true; done' EXIT
chroot "$root" swift --version | head -1
chroot "$root" bash -c "cd /src && OPENCARKEY_SHARED=/shared swift build --build-tests && OPENCARKEY_SHARED=/shared swift test"

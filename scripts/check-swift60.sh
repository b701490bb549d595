#!/usr/bin/env bash
# Builds and tests the committed tree with Swift 6.0 (Debian trixie's swiftlang 6.0.3, the
# toolchain the aarch64 build uses), in a trixie chroot made with debootstrap. Catches
# language features newer than 6.0 and differences in type inference (typed throws).
#
# It is also the libgpiod v2 check: trixie ships libgpiod 2.x, so the chroot builds the GPIO
# backend against trixie's own v2 header and library (the host, Debian 12, covers v1.6). After
# the tests, the GPIO lane (scripts/gpio-vm) runs the chroot's test bundle against gpio-sim in
# the Debian kernel, so v2 also meets a real kernel; it is skipped with the reason when the
# lane's prerequisites are missing (CARKEY_GPIO_LANE=0 skips it).
#
# Usage (as root): scripts/check-swift60.sh [--worktree] [--filter REGEX] [CHROOT]
#   CHROOT      default /opt/trixie-chroot, created once and reused
#   --worktree  test the working tree (tracked and untracked files, not ignored ones) instead
#               of HEAD, to check a change before committing it
#   --filter    passed to `swift test --filter` (default: every test)
set -euo pipefail
root=/opt/trixie-chroot worktree=0 filter=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --worktree) worktree=1; shift ;;
        --filter) filter=$2; shift 2 ;;
        -*) echo "check-swift60: unknown option $1" >&2; exit 2 ;;
        *) root=$1; shift ;;
    esac
done
repo=$(git rev-parse --show-toplevel)
shared=${OPENCARKEY_SHARED:-$repo/../shared}

# What the chroot builds and tests with. libtss2-dev and libp11-kit-dev: the CTSS2 and CPKCS11
# headers (nothing links them); swtpm, swtpm-tools and softhsm2: the TPM and PKCS#11 vault
# tests' software devices (issue 18), which would otherwise skip.
packages="swiftlang libssl-dev libmosquitto-dev libgpiod-dev libbluetooth-dev libsqlite3-dev pkg-config mosquitto mosquitto-clients openssl
    libtss2-dev libp11-kit-dev swtpm swtpm-tools softhsm2"
if [ ! -x "$root/usr/bin/swift" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
    [ -d "$root/usr" ] || debootstrap --variant=minbase --include=ca-certificates trixie "$root" http://deb.debian.org/debian
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\n' \
        > "$root/etc/apt/sources.list.d/debian.sources"
    chroot "$root" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        $(echo $packages)" >/dev/null
fi
# A chroot made before a package joined the list gets it now (silent when nothing is missing).
missing=$(for p in $packages; do
    [[ $(chroot "$root" dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || echo "$p"
done)
if [[ -n $missing ]]; then
    echo "check-swift60: installing into $root: $(echo $missing)"
    chroot "$root" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        $(echo $missing)" >/dev/null
fi
# Chroots made by this script before the v2 backend had bookworm's v1 header and library
# copied over trixie's; put trixie's own back (the v1 header defines GPIOD_LINE_BULK_MAX_LINES).
if grep -q GPIOD_LINE_BULK_MAX_LINES "$root/usr/include/gpiod.h" 2>/dev/null; then
    rm -f "$root"/usr/lib/x86_64-linux-gnu/libgpiod.so.2*
    chroot "$root" bash -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall libgpiod-dev" >/dev/null
fi
echo "libgpiod in the chroot: $(chroot "$root" pkg-config --modversion libgpiod)"

rm -rf "$root/src" "$root/shared" && mkdir -p "$root/src" "$root/shared"
if [[ $worktree == 1 ]]; then
    (cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -c --ignore-failed-read 2>/dev/null) | tar -x -C "$root/src"
else
    git -C "$repo" archive HEAD | tar -x -C "$root/src"
fi
cp -r "$shared/testdata" "$root/shared/"
for fs in proc dev dev/pts; do mountpoint -q "$root/$fs" || mount --bind "/$fs" "$root/$fs"; done
unmount() { for fs in dev/pts dev proc; do umount "$root/$fs" 2>/dev/null || true; done; }
trap unmount EXIT
chroot "$root" swift --version | head -1
# The chroot has no VM tools; the GPIO lane runs from the host below, with the chroot's bundle.
chroot "$root" bash -c "cd /src && export OPENCARKEY_SHARED=/shared CARKEY_GPIO_LANE=0 && swift build --build-tests && tools/pkcs11-bridge/build.sh .build/debug/carkey-pkcs11-bridge cc \$(pkg-config --cflags p11-kit-1) && swift test ${filter:+--filter '$filter'}"

unmount   # the guest binds its own /dev, /sys and /proc into the chroot
if [[ ${CARKEY_GPIO_LANE:-1} != 0 ]]; then
    lane_status=0
    "$repo/scripts/gpio-vm/run-lane.sh" --bundle "$root/src/.build/debug/OpenCarKeyPackageTests.xctest" \
        --chroot "$root" || lane_status=$?
    # 2: prerequisites missing (no root, vng or kernel): said above, not a failure of the tree.
    [[ $lane_status == 0 || $lane_status == 2 ]] || exit "$lane_status"
fi

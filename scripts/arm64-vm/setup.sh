#!/usr/bin/env bash
# Cached set-up for the arm64 VM lanes (scripts/ble-vm/run-lane.sh and scripts/gpio-vm/run-lane.sh
# with --arch arm64, through scripts/arm64-vm/arch.sh): Debian 12's arm64 kernel
# and a guest root of bookworm arm64 packages, downloaded by this machine's apt (an apt
# configuration of its own: arm64 only, empty status, see host_apt in scripts/aarch64/common.sh)
# and unpacked with dpkg-deb, never installed; nothing arm64 runs on the host.
#
# Under $OPENCARKEY_AARCH64_CACHE/vm-arm64 (default /var/cache/opencarkey-aarch64/vm-arm64):
#   root/      the guest's / : bash, coreutils, kmod, busybox-static (virtme-ng's initramfs),
#              bluez, bluez-test-tools (btvirt), dbus, python3, and the kernel
#              (boot/vmlinuz-RELEASE, lib/modules/RELEASE with modules.dep)
#   headers/   linux-headers-RELEASE (arm64) and -common, to build gpio-sim against; kbuild's
#              host tools are the host's amd64 linux-kbuild-6.1 (make deps installs it)
#   modules/   hci_vhci.ko built for it (scripts/gpio-vm/build-module.sh; Debian's arm64 kernel
#              lacks it), also copied into root/lib/modules/RELEASE/updates
#   release    the kernel release (e.g. 6.1.0-57-arm64)
# Stamps in $CACHE/stamps (vm-arm64-*), logs in $CACHE/logs. Prints the elapsed time.
# Usage: scripts/arm64-vm/setup.sh   (as root)   Exit 0 ready, 1 a step failed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../aarch64/common.sh"
[[ $(id -u) -eq 0 ]] || { echo "arm64-vm: setup needs root" >&2; exit 1; }
VM=$CACHE/vm-arm64
# Bump when the package list or the steps change: the stamp names it, so caches redo the step.
ROOT_REVISION=3
stamp=vm-arm64-bookworm-r$ROOT_REVISION
vhci_stamp=vm-arm64-hci_vhci-r$ROOT_REVISION
if [[ -f $STAMPS/$stamp && -f $STAMPS/$vhci_stamp && -f $VM/release ]]; then exit 0; fi

take_lock
mkdir -p "$STAMPS" "$LOGS"
t=$(now)
log=$LOGS/vm-arm64.log
fail() { echo "arm64-vm: $*; last lines of $log:" >&2; tail -n 20 "$log" >&2; exit 1; }
if [[ ! -f $STAMPS/$stamp || ! -f $VM/release ]]; then
rm -f "$STAMPS/$vhci_stamp"
packages="bash coreutils util-linux mount kmod busybox-static procps findutils grep sed gawk
    bluez bluez-test-tools dbus python3"
# An apt folder of its own (not setup.sh's bookworm-arm64): it reads bookworm-security too, for
# the kernel the host's linux-source-6.1 (gpio-sim's source) comes from.
conf=$(host_apt vm-bookworm-arm64 bookworm)
printf 'deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s bookworm-security main\n' \
    "${OPENCARKEY_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}" >>"$CACHE/apt/vm-bookworm-arm64/etc/sources.list"
archives=$CACHE/apt/vm-bookworm-arm64/archives
rm -rf "$archives/vm-arm64" && mkdir -p "$archives/vm-arm64"
{
    env APT_CONFIG="$conf" apt-get update -qq
    # The userspace with its dependencies (the whole closure: the status is empty).
    env APT_CONFIG="$conf" apt-get install -y -qq --download-only $packages
} >"$log" 2>&1 || fail "downloading the guest's packages failed"
# The kernel the metapackage names, its headers: those alone (the image's initramfs-tools and
# the headers' arm64 gcc and kbuild are not wanted).
abi=$(env APT_CONFIG="$conf" apt-cache depends linux-image-arm64 2>>"$log" | sed -n 's/.*Depends: linux-image-\(.*-arm64\)$/\1/p' | head -1)
[[ -n $abi ]] || fail "no kernel behind linux-image-arm64"
(cd "$archives/vm-arm64" && env APT_CONFIG="$conf" apt-get download "linux-image-$abi" "linux-headers-$abi" \
    "linux-headers-${abi%-arm64}-common") >>"$log" 2>&1 || fail "downloading linux-image-$abi failed"

safe_rm "$VM"; mkdir -p "$VM/root" "$VM/headers"
unpack_debs "$VM/root" "$archives"/*.deb "$archives/vm-arm64/linux-image-$abi"_*.deb
unpack_debs "$VM/headers" "$archives/vm-arm64"/linux-headers-*.deb
rm -rf "${archives:?}"/*.deb "$archives/vm-arm64"
merge_usr "$VM/root"
[[ -f $VM/root/boot/vmlinuz-$abi && -d $VM/root/lib/modules/$abi ]] || fail "no kernel in $VM/root"
depmod -b "$VM/root" "$abi" >>"$log" 2>&1 || fail "depmod for $abi"
# What the maintainer scripts would have made and the lanes need: users for dbus-daemon, the
# tty group (virtme-init mounts /dev/pts with gid=tty: without it no pty, no agent console),
# /bin/sh, a machine id; the tmpfs mount points.
printf 'root:x:0:0:root:/root:/bin/bash\nmessagebus:x:100:101::/nonexistent:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$VM/root/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nmessagebus:x:101:\nnogroup:x:65534:\n' >"$VM/root/etc/group"
[[ -e $VM/root/bin/sh ]] || ln -s dash "$VM/root/usr/bin/sh"
[[ -e $VM/root/bin/sh ]] || ln -sf bash "$VM/root/usr/bin/sh"
ln -sfn gawk "$VM/root/usr/bin/awk"   # update-alternatives' link
echo 0123456789abcdef0123456789abcdef >"$VM/root/etc/machine-id"
mkdir -p "$VM/root/proc" "$VM/root/sys" "$VM/root/dev" "$VM/root/run" "$VM/root/tmp" "$VM/root/root" "$VM/root/var/lib/bluetooth"
# The arm64 headers include the -common package's Makefile by its installed path and reach
# kbuild's scripts through ../../lib/linux-kbuild-6.1: point both into this tree (the tools are
# the host's amd64 ones).
headers=$VM/headers/usr/src/linux-headers-$abi
sed -i "s|^include /usr/src/|include $VM/headers/usr/src/|" "$headers/Makefile"
series=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$abi")
mkdir -p "$VM/headers/usr/lib" && ln -sfn "/usr/lib/linux-kbuild-$series" "$VM/headers/usr/lib/linux-kbuild-$series"
echo "$abi" >"$VM/release"
date -u +%FT%TZ >"$STAMPS/$stamp"
fi

# hci_vhci: Debian's arm64 kernel is built without CONFIG_BT_HCIVHCI (btvirt's driver), so it is
# cross-built from the host's linux-source like gpio-sim and put where modprobe finds it.
if [[ ! -f $STAMPS/$vhci_stamp ]]; then
    abi=$(cat "$VM/release")
    ko=$(MODULE=hci_vhci "$here/../gpio-vm/build-module.sh" "$abi" "$VM/modules" "$VM/headers/usr/src/linux-headers-$abi" 2>>"$log") \
        || fail "building hci_vhci for $abi failed"
    mkdir -p "$VM/root/lib/modules/$abi/updates" && cp "$ko" "$VM/root/lib/modules/$abi/updates/"
    depmod -b "$VM/root" "$abi" >>"$log" 2>&1 || fail "depmod for $abi"
    date -u +%FT%TZ >"$STAMPS/$vhci_stamp"
fi
echo "arm64-vm: guest root and kernel $(cat "$VM/release") ready in $VM ($(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s)"

#!/usr/bin/env bash
# Install the Debian packages OpenCarKey builds and tests against, and nothing else.
# Silent when everything is already installed; otherwise one line naming what it installs.
# Usage: scripts/deps.sh [--build] [--list] [extra-package ...]   (as root, or a user with sudo)
#   --build  only what building and the demo need (make build, make run): the libraries'
#            headers and pkg-config; the brokers, VM lanes, kernel source, packaging and
#            aarch64 tools, and the PyPI venvs are left to make deps / make test
#   --list   print the packages of the chosen set, one a line, and install nothing
set -euo pipefail

profile=all list=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --build) profile=build; shift ;;
        --list) list=1; shift ;;
        *) break ;;
    esac
done

# What `swift build` and the demo need.
build_packages=(
    libssl-dev          # COpenSSL: crypto core, TLS for MQTT
    libmosquitto-dev    # CMosquitto: MQTT client
    libgpiod-dev        # CGPIOD: lock actuators (libgpiod v1.6 API)
    libbluetooth-dev    # CBluetooth: BLE advertising via BlueZ
    libsqlite3-dev      # CSQLite: durable outbound queue
    # Key vaults: the PKCS#11 header only (the agent dlopens the module); the TPM 2.0 vault
    # speaks the TPM's protocol itself and needs no tpm2-tss to build.
    libp11-kit-dev      # CPKCS11: the PKCS#11 v2.40 header (p11-kit-1/p11-kit/pkcs11.h)
    pkg-config          # SwiftPM resolves the system libraries through it
)
# What the tests, benchmarks, lanes and packaging need besides.
test_packages=(
    mosquitto           # MQTT broker for integration tests
    mosquitto-clients   # mosquitto_pub/mosquitto_sub: the cloud tests and the benchmark use them
    openssl             # the openssl CLI: the TLS tests make a throw-away CA with it
    ejabberd            # a second, independent MQTT v5 broker (mod_mqtt), clustered in the tests
    swtpm               # TPM 2.0 simulator: the TPM vault tests and make bench start one on loopback
    swtpm-tools         # swtpm_setup, swtpm_ioctl: provision or poke a simulator by hand (the tests need only swtpm)
    tpm2-tools          # tpm2_* commands: the reference the TPM tests check blobs against (tpm2-tss underneath); inspect a TPM by hand
    softhsm2            # software PKCS#11 token: the PKCS#11 vault tests and make bench (softhsm2-util, the module)
    # The Bluetooth LE lane (scripts/ble-vm): a Debian kernel booted under qemu with virtme-ng,
    # virtual controllers from btvirt, btmgmt/hcitool to drive them, bluetoothd to detect.
    linux-image-amd64   # the guest kernel (bluetooth and hci_vhci modules)
    qemu-system-x86     # runs it (TCG when there is no KVM)
    busybox-static      # virtme-ng's init in the guest
    bluez-test-tools    # btvirt: virtual LE controllers over hci_vhci
    bluez               # btmgmt, hcitool, bluetoothd (the lane checks that the agent refuses it)
    dbus                # dbus-daemon for bluetoothd in the guest
    python3-venv        # the private virtme-ng below
    # Shipping to the board (issue 13): the aarch64 cross build runs in a debootstrapped trixie
    # chroot, its binaries under qemu-aarch64-static; overlays compile with dtc; the .deb is
    # checked with lintian and installed in a chroot.
    debootstrap         # the trixie chroots (scripts/aarch64, make check-swift60) and the .deb chroot
    qemu-user-static    # runs arm64 code: the aarch64 binaries (smoke test), the arm64 .deb chroot
    binfmt-support      # registers qemu-aarch64-static for the arm64 .deb chroot (scripts/deb)
    device-tree-compiler # dtc: the board overlays are compiled in the tests
    dpkg-dev            # dpkg-deb, dpkg-architecture for make deb
    lintian             # the .deb is checked with it
    # The GPIO lane (scripts/gpio-vm): Debian's kernel lacks gpio-sim, so the lane builds it as a
    # module from Debian's kernel source against the guest kernel's headers.
    linux-headers-amd64 # headers of the linux-image-amd64 kernel the lanes boot
    linux-source-6.1    # gpio-sim.c and irq_sim.c of the same kernel version
    # The arm64 lanes (scripts/ble-vm and scripts/gpio-vm with --arch arm64): Debian 12's arm64
    # kernel and guest root are downloaded and unpacked by scripts/arm64-vm/setup.sh (cached);
    # gpio-sim and hci_vhci are cross-built for it from linux-source-6.1 with kbuild's host
    # tools from linux-kbuild-6.1 (amd64, a dependency of linux-headers-amd64).
    qemu-system-arm     # qemu-system-aarch64 (TCG) runs the arm64 kernel
    gcc-aarch64-linux-gnu # the cross compiler for the arm64 modules (gcc-12, as the kernel was built)
)
packages=("${build_packages[@]}")
[[ $profile == build ]] || packages+=("${test_packages[@]}")
packages+=("$@")
if [[ $list == 1 ]]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    [[ $status == installed ]] || missing+=("$package")
done

# virtme-ng comes from PyPI into a private venv (pinned; it is not in Debian 12).
VNG_VENV=${OPENCARKEY_VNG_VENV:-/var/cache/opencarkey-vng}
VNG_VERSION=1.42
vng_ready() { [[ -x $VNG_VENV/bin/vng ]] && [[ -f $VNG_VENV/.version-$VNG_VERSION ]]; }

# spdx-tools (pyspdxtools) from PyPI into its own venv: the tests validate the release SBOMs
# with it (scripts/licensing/sbom.py writes them). Pinned: a newer validator may judge differently.
SPDX_VENV=${OPENCARKEY_SPDX_VENV:-/var/cache/opencarkey-spdx}
SPDX_VERSION=0.8.5
spdx_ready() { [[ -x $SPDX_VENV/bin/pyspdxtools ]] && [[ -f $SPDX_VENV/.version-$SPDX_VERSION ]]; }

# The build set needs neither venv.
if [[ $profile == build ]]; then
    vng_ready() { true; }
    spdx_ready() { true; }
fi
if [[ ${#missing[@]} -eq 0 ]] && vng_ready && spdx_ready; then
    exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "deps: need root or sudo to install: ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "deps: installing ${missing[*]}" >&2
    "${as_root[@]}" apt-get update -qq >/dev/null
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # The bluez package enables bluetoothd; on a build host it must not run (the lane starts
    # its own in the guest only for the bluetoothd-detection check).
    if [[ " ${missing[*]} " == *" bluez "* ]] && command -v systemctl >/dev/null 2>&1; then
        "${as_root[@]}" systemctl disable --now bluetooth >/dev/null 2>&1 || true
    fi
    # ejabberd's package enables a system node on 1883 and the XMPP ports; the tests start their
    # own nodes (private config, spool, cookie and epmd port), so the system one must not run.
    if [[ " ${missing[*]} " == *" ejabberd "* ]]; then
        "${as_root[@]}" systemctl disable --now ejabberd >/dev/null 2>&1 || true
        "${as_root[@]}" update-rc.d ejabberd disable >/dev/null 2>&1 || true
        timeout 60 "${as_root[@]}" /etc/init.d/ejabberd stop >/dev/null 2>&1 || true
    fi
fi

# venv_install VENV NAME VERSION: NAME==VERSION from PyPI into a fresh VENV, marked with the
# version so that a pin change reinstalls it.
venv_install() {
    local venv=$1 name=$2 version=$3
    echo "deps: installing $name $version into $venv" >&2
    "${as_root[@]}" rm -rf "$venv"
    "${as_root[@]}" python3 -m venv "$venv"
    "${as_root[@]}" "$venv/bin/pip" install -q --disable-pip-version-check "$name==$version" >/dev/null
    "${as_root[@]}" touch "$venv/.version-$version"
}
vng_ready || venv_install "$VNG_VENV" virtme-ng "$VNG_VERSION"
spdx_ready || venv_install "$SPDX_VENV" spdx-tools "$SPDX_VERSION"

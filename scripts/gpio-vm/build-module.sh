#!/usr/bin/env bash
# Builds gpio-sim, the kernel's simulated GPIO chip, as a module for a Debian kernel that ships
# without it. Debian's amd64 kernels (6.1 in bookworm, 6.12 in trixie) have CONFIG_GPIO_SIM and
# the IRQ simulator it needs (CONFIG_IRQ_SIM) switched off, so the lane compiles both from
# Debian's own linux-source package of the same version, against that kernel's headers, into
# one out-of-tree gpio-sim.ko. One change to the upstream files: irq_sim calls irq_to_desc(),
# which modules cannot use since 5.11; generic_handle_irq() reaches the same handler.
# With MODULE=hci_vhci it builds the virtual HCI driver instead (drivers/bluetooth/hci_vhci.c,
# unchanged), which Debian's arm64 kernel also leaves out (the BLE lane's btvirt needs it).
#
# Usage: [MODULE=gpio-sim|hci_vhci] scripts/gpio-vm/build-module.sh RELEASE [CACHE [HEADERS]]
#   CACHE    default /var/cache/opencarkey-gpio-sim
#   HEADERS  the kernel's build folder (default /lib/modules/RELEASE/build); a RELEASE ending in
#            -arm64 is cross-built (ARCH=arm64, CROSS_COMPILE=aarch64-linux-gnu-: Debian's
#            gcc-aarch64-linux-gnu; the headers are scripts/arm64-vm/setup.sh's)
# Prints the module's path; cached per kernel release. Installs linux-headers-RELEASE and
# linux-source-X.Y when missing (not for a HEADERS folder). Exit 2: the sources, headers or
# cross compiler cannot be had.
set -euo pipefail
release=${1:?usage: build-module.sh RELEASE [CACHE [HEADERS]]}
cache=${2:-/var/cache/opencarkey-gpio-sim}/$release
headers=${3:-/lib/modules/$release/build}
cross=()
if [[ $release == *-arm64 ]]; then
    cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
    command -v aarch64-linux-gnu-gcc-12 >/dev/null \
        || { echo "build-module: aarch64-linux-gnu-gcc-12 missing (apt install gcc-aarch64-linux-gnu)" >&2; exit 2; }
fi
name=${MODULE:-gpio-sim}
module=$cache/$name.ko
if [[ -f $module ]]; then echo "$module"; exit 0; fi

series=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$release")
tarball=/usr/src/linux-source-$series.tar.xz
wanted=()
[[ -f $tarball ]] || wanted+=("linux-source-$series")
[[ -d $headers || -n ${3:-} ]] || wanted+=("linux-headers-$release")   # a HEADERS folder is the caller's
if [[ ${#wanted[@]} -gt 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null \
        || { echo "build-module: cannot install ${wanted[*]}" >&2; exit 2; }
fi
work=$(mktemp -d /tmp/gpio-sim-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
top=linux-source-$series
mkdir "$work/module"
case $name in
    gpio-sim)
        tar -xJf "$tarball" -C "$work" "$top/drivers/gpio/gpio-sim.c" "$top/drivers/gpio/gpiolib.h" "$top/kernel/irq/irq_sim.c"
        cp "$work/$top/drivers/gpio/gpio-sim.c" "$work/module/gpio_sim_main.c"
        cp "$work/$top/drivers/gpio/gpiolib.h" "$work/$top/kernel/irq/irq_sim.c" "$work/module/"
        sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$work/module/irq_sim.c"
        grep -q 'generic_handle_irq(irqnum)' "$work/module/irq_sim.c" \
            || { echo "build-module: irq_sim.c of $series no longer has the expected irq_to_desc call" >&2; exit 1; }
        printf 'obj-m += gpio-sim.o\ngpio-sim-y := gpio_sim_main.o irq_sim.o\n' >"$work/module/Kbuild"
        ;;
    hci_vhci)
        tar -xJf "$tarball" -C "$work" "$top/drivers/bluetooth/hci_vhci.c"
        cp "$work/$top/drivers/bluetooth/hci_vhci.c" "$work/module/"
        printf 'obj-m += hci_vhci.o\n' >"$work/module/Kbuild"
        ;;
    *) echo "build-module: MODULE must be gpio-sim or hci_vhci, not $name" >&2; exit 2 ;;
esac
[[ -d $headers ]] || { echo "build-module: no kernel headers at $headers" >&2; exit 2; }
[[ -x $headers/scripts/basic/fixdep ]] \
    || { echo "build-module: kbuild's host tools missing at $headers/scripts (apt install linux-kbuild-$series)" >&2; exit 2; }
make -s -C "$headers" M="$work/module" "${cross[@]}" modules >"$work/make.log" 2>&1 \
    || { cat "$work/make.log" >&2; exit 1; }
mkdir -p "$cache"
cp "$work/module/$name.ko" "$module"
echo "$module"

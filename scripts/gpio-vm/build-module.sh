#!/usr/bin/env bash
# Builds gpio-sim, the kernel's simulated GPIO chip, as a module for a Debian kernel that ships
# without it. Debian's amd64 kernels (6.1 in bookworm, 6.12 in trixie) have CONFIG_GPIO_SIM and
# the IRQ simulator it needs (CONFIG_IRQ_SIM) switched off, so the lane compiles both from
# Debian's own linux-source package of the same version, against that kernel's headers, into
# one out-of-tree gpio-sim.ko. One change to the upstream files: irq_sim calls irq_to_desc(),
# which modules cannot use since 5.11; generic_handle_irq() reaches the same handler.
#
# Usage: scripts/gpio-vm/build-module.sh RELEASE [CACHE]   (CACHE default /var/cache/opencarkey-gpio-sim)
# Prints the module's path; cached per kernel release. Installs linux-headers-RELEASE and
# linux-source-X.Y when missing. Exit 2: the sources or headers cannot be had.
set -euo pipefail
release=${1:?usage: build-module.sh RELEASE [CACHE]}
cache=${2:-/var/cache/opencarkey-gpio-sim}/$release
module=$cache/gpio-sim.ko
if [[ -f $module ]]; then echo "$module"; exit 0; fi

series=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<<"$release")
tarball=/usr/src/linux-source-$series.tar.xz
if [[ ! -d /lib/modules/$release/build || ! -f $tarball ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "linux-headers-$release" "linux-source-$series" >/dev/null \
        || { echo "build-module: cannot install linux-headers-$release and linux-source-$series" >&2; exit 2; }
fi
work=$(mktemp -d /tmp/gpio-sim-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
top=linux-source-$series
tar -xJf "$tarball" -C "$work" "$top/drivers/gpio/gpio-sim.c" "$top/drivers/gpio/gpiolib.h" "$top/kernel/irq/irq_sim.c"
mkdir "$work/module"
cp "$work/$top/drivers/gpio/gpio-sim.c" "$work/module/gpio_sim_main.c"
cp "$work/$top/drivers/gpio/gpiolib.h" "$work/$top/kernel/irq/irq_sim.c" "$work/module/"
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$work/module/irq_sim.c"
grep -q 'generic_handle_irq(irqnum)' "$work/module/irq_sim.c" \
    || { echo "build-module: irq_sim.c of $series no longer has the expected irq_to_desc call" >&2; exit 1; }
printf 'obj-m += gpio-sim.o\ngpio-sim-y := gpio_sim_main.o irq_sim.o\n' >"$work/module/Kbuild"
make -s -C "/lib/modules/$release/build" M="$work/module" modules >"$work/make.log" 2>&1 \
    || { cat "$work/make.log" >&2; exit 1; }
mkdir -p "$cache"
cp "$work/module/gpio-sim.ko" "$module"
echo "$module"

#!/usr/bin/env bash
# The GPIO lane: boots the host's Debian kernel under qemu (virtme-ng, the host's userspace
# read-only over 9p), loads gpio-sim (built by build-module.sh: Debian's kernel lacks it), makes
# two simulated chips and runs GPIOKernelTests from a test bundle against them: the real
# libgpiod backend on the real GPIO character device, with line values and pulls read and
# set through gpio-sim's sysfs attributes.
#
# Usage: scripts/gpio-vm/run-lane.sh (--bundle PATH [--chroot DIR] | --bin DIR) [--arch A] [--results DIR] [--timeout S]
#   --bundle   OpenCarKeyPackageTests.xctest to run (the host build: libgpiod v1)
#   --bin      instead of a bundle: carkey-agent and carkey from DIR on a gpio-sim board
#              (agent-checks.sh: lines, pulses, edges, a busy line)
#   --arch     x86_64 (default) or arm64: Debian 12's arm64 kernel under qemu-system-aarch64
#              (scripts/arm64-vm/arch.sh), gpio-sim cross-built for it; needs --bin with the
#              static aarch64 binaries (build/aarch64)
#   --chroot   run the bundle inside DIR in the guest (check-swift60's trixie chroot, whose
#              build uses libgpiod v2); --bundle is then a path on the host into DIR
#   --results  where the guest writes setup.txt, lane.txt and xctest.log (default: a new temp dir)
#   --timeout  bound on the VM run (default 600)
# Prints `gpio-lane: NAME ok|FAIL ...` per test, a time line and a summary.
# Exit: 0 all ok, 1 a test failed, 2 prerequisites missing, 3 the VM set-up failed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle="" chroot_dir="" bin="" arch=x86_64 results="" timeout=600
while [[ $# -gt 0 ]]; do
    case $1 in
        --bundle) bundle=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --arch) arch=$2; shift 2 ;;
        --chroot) chroot_dir=$2; shift 2 ;;
        --results) results=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        *) echo "gpio-lane: unknown argument $1" >&2; exit 2 ;;
    esac
done
results=${results:-$(mktemp -d /tmp/gpio-lane.XXXXXX)}
mkdir -p "$results" && results=$(cd "$results" && pwd)

vng=${OPENCARKEY_VNG:-/var/cache/opencarkey-vng/bin/vng}
source "$here/../arm64-vm/arch.sh"
missing=()
[[ $(id -u) -eq 0 ]] || missing+=("root (the guest loads a module and writes configfs)")
[[ -x $vng ]] || missing+=("virtme-ng at $vng (make deps)")
if [[ -n $bin ]]; then
    want=$([[ $arch == arm64 ]] && echo aarch64 || echo "$arch")
    for tool in carkey-agent carkey; do
        if [[ ! -x $bin/$tool ]]; then missing+=("$bin/$tool (build first)")
        elif [[ $(elf_arch "$bin/$tool") != "$want" ]]; then missing+=("$bin/$tool for $want (it is $(elf_arch "$bin/$tool"))"); fi
    done
else
    [[ $arch == x86_64 ]] || missing+=("--bin DIR: the $arch lane runs the binaries (there is no $arch test bundle)")
    [[ -n $bundle && -x $bundle ]] || missing+=("the test bundle ${bundle:-(--bundle)} (build first)")
fi
[[ -z $chroot_dir || -d $chroot_dir/usr ]] || missing+=("the chroot $chroot_dir")
vm_arch "$arch"
if [[ ${#missing[@]} -eq 0 ]]; then
    [[ -d $vm_root/lib/modules/$release ]] || missing+=("$vm_root/lib/modules/$release for $kernel")
fi
if [[ ${#missing[@]} -eq 0 ]]; then
    headers=()
    [[ $arch == arm64 ]] && headers=(/var/cache/opencarkey-gpio-sim "$(dirname "$vm_root")/headers/usr/src/linux-headers-$release")
    module=$("$here/build-module.sh" "$release" "${headers[@]}" 2>"$results/build-module.err")
    case $? in
        0) ;;
        2) missing+=("gpio-sim for $release: $(tr '\n' ' ' <"$results/build-module.err")") ;;
        *) echo "gpio-lane: building gpio-sim failed: $(tail -5 "$results/build-module.err" | tr '\n' ' ')"; exit 3 ;;
    esac
fi
if [[ ${#missing[@]} -gt 0 ]]; then
    printf 'gpio-lane: missing %s\n' "${missing[@]}"
    exit 2
fi
[[ -n $chroot_dir ]] && chroot_dir=$(cd "$chroot_dir" && pwd)

# The guest sees the host's tree read-only (x86_64), but virtme-ng puts tmpfs over /var/cache
# and /tmp: the module goes in through the results folder, which it shares read-write, and the
# bundle's folder (a scratch path under /tmp, often) or the binaries' folder are shared too.
cp "$module" "$results/gpio-sim.ko"
vm_share g_results rw "$results"
vm_share g_here ro "$here/.."
if [[ -n $bin ]]; then
    vm_share g_bin rw "$(cd "$bin" && pwd)"
    guest_run="$g_results $g_results/gpio-sim.ko --bin $g_bin"
else
    bundle=$(cd "$(dirname "$bundle")" && pwd)/$(basename "$bundle")
    vm_share g_bundle rw "$(dirname "$bundle")"
    guest_run="$g_results $g_results/gpio-sim.ko $g_bundle/$(basename "$bundle") $chroot_dir"
fi
export PATH="$(dirname "$vng"):$PATH"   # vng runs virtme-run from its venv
started=$(date +%s.%N)
rm -f "$results/lane.txt" "$results/setup.txt"
timeout --kill-after=10 "$timeout" "$vng" --run "$kernel" --force-9p "${vm_args[@]}" \
    --memory 1G --cpus 2 \
    --exec "$g_here/gpio-vm/in-vm.sh $guest_run" >"$results/vm.log" 2>&1 </dev/null
vm_status=$?
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$started" 'BEGIN { printf "%.0f", a - b }')
if ! grep -q '^setup ok' "$results/setup.txt" 2>/dev/null; then
    echo "gpio-lane: set-up failed (vng exit $vm_status): $(tail -n 3 "$results/setup.txt" 2>/dev/null | tr '\n' ' ')$(tail -n 3 "$results/vm.log" | tr '\n' ' ')"
    exit 3
fi
sed 's/^/gpio-lane-setup: /' "$results/setup.txt"
cat "$results/lane.txt" 2>/dev/null
passed=$(grep -c '^gpio-lane: .* ok' "$results/lane.txt" 2>/dev/null)
failed=$(grep -c '^gpio-lane: .* FAIL' "$results/lane.txt" 2>/dev/null)
finished=$(grep -c '^gpio-lane-end' "$results/lane.txt" 2>/dev/null)
printf 'gpio-lane-summary: %d ok, %d failed, %s, %s s wall; logs in %s\n' "$passed" "$failed" \
    "$([[ $finished -gt 0 ]] && echo complete || echo 'did not finish')" "$elapsed" "$results"
[[ $failed -eq 0 && $finished -gt 0 && $passed -gt 0 ]] && exit 0
exit 1

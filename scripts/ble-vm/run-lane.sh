#!/usr/bin/env bash
# The Bluetooth LE lane: boots the Debian kernel under qemu (virtme-ng, the host's userspace
# read-only over 9p), loads the Bluetooth modules, starts btvirt with virtual LE controllers and
# runs carkey-agent on one of them and `carkey phone --ble` on the others (scenarios.sh).
#
# Usage: scripts/ble-vm/run-lane.sh --bin DIR [--arch x86_64|arm64] [--results DIR] [--timeout SECONDS] [--attempts N]
#   --bin       folder holding carkey-agent and carkey (e.g. .build/debug; build/aarch64 for arm64)
#   --arch      the guest (scripts/arm64-vm/arch.sh): x86_64 (default) boots the host's kernel;
#               arm64 boots Debian 12's arm64 kernel under qemu-system-aarch64 with an arm64
#               root (bluez, btvirt, python3) and needs aarch64 binaries
#   --results   where the guest writes lane.txt, the agent's log and every phone's output
#   --timeout   bound on one VM run (default 600)
#   --attempts  VM boots to try when the *set-up* fails (slow btvirt start, HCI reset timeout);
#               a failed scenario is never retried (default 3)
# Prints the guest's result lines (`ble-lane: NAME ok|FAIL ...`, `ble-lane-time: ...`) and a
# summary. Exit: 0 all scenarios ok, 1 a scenario failed, 2 prerequisites missing, 3 the set-up
# failed on every attempt.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin="" arch=x86_64 results="" timeout=600 attempts=3
while [[ $# -gt 0 ]]; do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --arch) arch=$2; shift 2 ;;
        --results) results=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        --attempts) attempts=$2; shift 2 ;;
        *) echo "run-lane: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n $bin ]] || { echo "run-lane: --bin DIR is required" >&2; exit 2; }
[[ -d $bin ]] || { echo "ble-lane: missing the folder $bin (build first)"; exit 2; }
bin=$(cd "$bin" && pwd)
results=${results:-$(mktemp -d /tmp/ble-lane.XXXXXX)}
mkdir -p "$results"
results=$(cd "$results" && pwd)

vng=${OPENCARKEY_VNG:-/var/cache/opencarkey-vng/bin/vng}
source "$here/../arm64-vm/arch.sh"
missing=()
[[ $(id -u) -eq 0 ]] || missing+=("root (the guest needs it for the Bluetooth sockets)")
[[ -x $vng ]] || missing+=("virtme-ng at $vng (make deps)")
want=$([[ $arch == arm64 ]] && echo aarch64 || echo "$arch")
for tool in carkey-agent carkey; do
    if [[ ! -x $bin/$tool ]]; then missing+=("$bin/$tool (build first)")
    elif [[ $(elf_arch "$bin/$tool") != "$want" ]]; then missing+=("$bin/$tool for $want (it is $(elf_arch "$bin/$tool"))"); fi
done
vm_arch "$arch"
in_root() { [[ -x $vm_root/usr/bin/$1 || -x $vm_root/usr/sbin/$1 || -x $vm_root/bin/$1 ]]; }
in_root btvirt || missing+=("btvirt in $vm_root (apt install bluez-test-tools)")
in_root btmgmt || missing+=("btmgmt in $vm_root (apt install bluez)")
in_root busybox || missing+=("busybox in $vm_root (apt install busybox-static)")
if [[ ${#missing[@]} -gt 0 ]]; then
    printf 'ble-lane: missing %s\n' "${missing[@]}"
    exit 2
fi
if [[ ! -d $vm_root/lib/modules/$release ]]; then
    echo "ble-lane: missing $vm_root/lib/modules/$release for $kernel"; exit 2
fi
vm_share g_results rw "$results"
vm_share g_bin ro "$bin"
vm_share g_here ro "$here"

export PATH="$(dirname "$vng"):$PATH"   # vng runs virtme-run from its venv
started=$(date +%s.%N)
status=3
for attempt in $(seq 1 "$attempts"); do
    rm -f "$results/lane.txt" "$results/setup.txt"
    log=$results/vm-$attempt.log
    boot=$(date +%s.%N)
    timeout --kill-after=10 "$timeout" "$vng" --run "$kernel" --force-9p "${vm_args[@]}" \
        --memory 1G --cpus 2 \
        --exec "$g_here/in-vm.sh $g_results $g_bin $boot" >"$log" 2>&1 </dev/null
    vm_status=$?
    if [[ -f $results/setup.txt ]] && grep -q '^setup ok' "$results/setup.txt"; then
        cat "$results/setup.txt" | sed 's/^/ble-lane-setup: /'
        status=0
        break
    fi
    echo "ble-lane: set-up attempt $attempt failed (vng exit $vm_status): $(tail -n 3 "$results/setup.txt" 2>/dev/null | tr '\n' ' ')$(tail -n 3 "$log" | tr '\n' ' ')"
done
if [[ $status -ne 0 ]]; then
    echo "ble-lane-summary: set-up failed $attempts times; logs in $results"
    exit 3
fi
[[ -f $results/lane.txt ]] && cat "$results/lane.txt"
passed=$(grep -c '^ble-lane: .* ok' "$results/lane.txt" 2>/dev/null)
failed=$(grep -c '^ble-lane: .* FAIL' "$results/lane.txt" 2>/dev/null)
finished=$(grep -c '^ble-lane-end' "$results/lane.txt" 2>/dev/null)
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$started" 'BEGIN { print a - b }')
printf 'ble-lane-summary: %d ok, %d failed, %s, %.0f s wall (%d VM boot(s)); logs in %s\n' \
    "$passed" "$failed" "$([[ $finished -gt 0 ]] && echo complete || echo 'did not finish')" "$elapsed" "$attempt" "$results"
[[ $failed -eq 0 && $finished -gt 0 && $passed -gt 0 ]] && exit 0
exit 1

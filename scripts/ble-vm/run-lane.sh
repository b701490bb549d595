#!/usr/bin/env bash
# The Bluetooth LE lane: boots the Debian kernel under qemu (virtme-ng, the host's userspace
# read-only over 9p), loads the Bluetooth modules, starts btvirt with virtual LE controllers and
# runs carkey-agent on one of them and `carkey phone --ble` on the others (scenarios.sh).
#
# Usage: scripts/ble-vm/run-lane.sh --bin DIR [--results DIR] [--timeout SECONDS] [--attempts N]
#   --bin       folder holding carkey-agent and carkey (e.g. .build/debug)
#   --results   where the guest writes lane.txt, the agent's log and every phone's output
#   --timeout   bound on one VM run (default 600)
#   --attempts  VM boots to try when the *set-up* fails (slow btvirt start, HCI reset timeout);
#               a failed scenario is never retried (default 3)
# Prints the guest's result lines (`ble-lane: NAME ok|FAIL ...`, `ble-lane-time: ...`) and a
# summary. Exit: 0 all scenarios ok, 1 a scenario failed, 2 prerequisites missing, 3 the set-up
# failed on every attempt.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin="" results="" timeout=600 attempts=3
while [[ $# -gt 0 ]]; do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --results) results=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        --attempts) attempts=$2; shift 2 ;;
        *) echo "run-lane: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n $bin ]] || { echo "run-lane: --bin DIR is required" >&2; exit 2; }
bin=$(cd "$bin" && pwd) || exit 2
results=${results:-$(mktemp -d /tmp/ble-lane.XXXXXX)}
mkdir -p "$results"
results=$(cd "$results" && pwd)

vng=${OPENCARKEY_VNG:-/var/cache/opencarkey-vng/bin/vng}
kernel=${OPENCARKEY_VM_KERNEL:-$(ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1)}
missing=()
[[ $(id -u) -eq 0 ]] || missing+=("root (the guest needs it for the Bluetooth sockets)")
[[ -x $vng ]] || missing+=("virtme-ng at $vng (make deps)")
[[ -n $kernel && -r $kernel ]] || missing+=("a kernel image /boot/vmlinuz-*-amd64 (apt install linux-image-amd64)")
command -v qemu-system-x86_64 >/dev/null || missing+=("qemu-system-x86_64 (apt install qemu-system-x86)")
command -v btvirt >/dev/null || [[ -x /usr/bin/btvirt ]] || missing+=("btvirt (apt install bluez-test-tools)")
command -v btmgmt >/dev/null || missing+=("btmgmt (apt install bluez)")
[[ -x /bin/busybox || -x /usr/bin/busybox ]] || missing+=("busybox (apt install busybox-static)")
for tool in carkey-agent carkey; do [[ -x $bin/$tool ]] || missing+=("$bin/$tool (build first)"); done
if [[ ${#missing[@]} -gt 0 ]]; then
    printf 'ble-lane: missing %s\n' "${missing[@]}"
    exit 2
fi
release=$(basename "$kernel"); release=${release#vmlinuz-}
if [[ ! -d /lib/modules/$release ]]; then
    echo "ble-lane: missing /lib/modules/$release for $kernel"; exit 2
fi

export PATH="$(dirname "$vng"):$PATH"   # vng runs virtme-run from its venv
kvm=(--disable-kvm)
[[ ${OPENCARKEY_VM_KVM:-0} == 1 && -w /dev/kvm ]] && kvm=()

started=$(date +%s.%N)
status=3
for attempt in $(seq 1 "$attempts"); do
    rm -f "$results/lane.txt" "$results/setup.txt"
    log=$results/vm-$attempt.log
    boot=$(date +%s.%N)
    timeout --kill-after=10 "$timeout" "$vng" --run "$kernel" --force-9p "${kvm[@]}" \
        --memory 1G --cpus 2 --rwdir="$results" --cwd / \
        --exec "$here/in-vm.sh $results $bin $boot" >"$log" 2>&1 </dev/null
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

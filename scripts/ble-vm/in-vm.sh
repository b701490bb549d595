#!/usr/bin/env bash
# Runs inside the lane's VM (see run-lane.sh): set-up, then the scenarios.
# Usage: in-vm.sh RESULTS BIN BOOT_EPOCH
#   writes RESULTS/setup.txt ("setup ok ..." or "setup failed: why") and RESULTS/lane.txt
set -uo pipefail
results=$1 bin=$2 boot_started=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH=$bin:$PATH
export LANE_RESULTS=$results LANE_BIN=$bin
# Nine controllers: hci0 is the car, every phone visit gets a fresh central (btvirt sends a
# central that has connected once no more advertising reports, reliably, and the kernel scans
# before it connects).
export LANE_CONTROLLERS=${LANE_CONTROLLERS:-9}
source "$here/lib.sh"

guest_up=$(now)
setup_fail() { echo "setup failed: $*" >>"$results/setup.txt"; exit 3; }

# Modules: the crypto the kernel's SMP and ECDH need, then Bluetooth and the virtual HCI driver.
t0=$(now)
for module in af_alg algif_hash algif_skcipher ecb cmac rfkill crc16 ecc ecdh_generic bluetooth hci_vhci; do
    modprobe "$module" 2>>"$results/setup.txt" || setup_fail "modprobe $module"
done
t_modules=$(ms_since "$t0")

# btvirt: one emulated LE controller per -l. Its first HCI_Reset sometimes times out under
# load; then restart it once before giving up (run-lane.sh boots a new VM after that).
t0=$(now)
start_btvirt() {
    btvirt -l"$LANE_CONTROLLERS" >"$results/btvirt.log" 2>&1 &
    btvirt_pid=$!
    for _ in $(seq 1 150); do
        count=$(ls -1d /sys/class/bluetooth/hci* 2>/dev/null | wc -l)
        [[ $count -ge $LANE_CONTROLLERS ]] && break
        sleep 0.2
    done
    # A controller whose initialisation timed out is in sysfs but not in the management index
    # list (mgmt answers Invalid Index): every one must report its btvirt address. Bounded by
    # the clock: under load one btmgmt call takes seconds.
    local until=$(( $(date +%s) + 30 ))
    while [[ $(date +%s) -le $until ]]; do
        count=$(btmgmt info 2>/dev/null | grep -c 'addr 00:AA:01:')
        [[ $count -ge $LANE_CONTROLLERS ]] && return 0
        sleep 0.2
    done
    return 1
}
if ! start_btvirt; then
    kill "$btvirt_pid" 2>/dev/null; sleep 1
    start_btvirt || setup_fail "btvirt brought up $(ls -1d /sys/class/bluetooth/hci* 2>/dev/null | wc -l) of $LANE_CONTROLLERS controllers"
fi
t_btvirt=$(ms_since "$t0")
# Every HCI packet of every controller, for the post-mortem (read with `btmon -r btmon.snoop`).
btmon -w "$results/btmon.snoop" >/dev/null 2>&1 &
btmon_pid=$!

# Phones: power on with LE. The car's adapter (hci0) is left powered off: the agent owns it.
t0=$(now)
for index in $(seq 1 $((LANE_CONTROLLERS - 1))); do
    ok=0
    for _ in 1 2 3; do
        if btmgmt --index "$index" le on >/dev/null 2>&1 && btmgmt --index "$index" power on >/dev/null 2>&1 \
            && btmgmt --index "$index" info 2>/dev/null | grep -q 'current settings:.*powered'; then ok=1; break; fi
        sleep 1
    done
    [[ $ok -eq 1 ]] || setup_fail "could not power on hci$index"
done
t_power=$(ms_since "$t0")

printf 'setup ok: host boot to guest %s ms, modules %s ms, btvirt (%s controllers) %s ms, power-on %s ms\n' \
    "$(awk -v a="$guest_up" -v b="$boot_started" 'BEGIN { printf "%.0f", (a - b) * 1000 }')" \
    "$t_modules" "$LANE_CONTROLLERS" "$t_btvirt" "$t_power" >>"$results/setup.txt"

source "$here/scenarios.sh"
run_scenarios
echo "ble-lane-end" >>"$results/lane.txt"
kill -INT "$btmon_pid" 2>/dev/null; wait "$btmon_pid" 2>/dev/null
sync

#!/usr/bin/env bash
# Runs inside the GPIO lane's VM (see run-lane.sh): loads gpio-sim, makes two simulated chips
# through configfs, then runs the test bundle's GPIOKernelTests against them and turns each test
# case into a result line.
# Usage: in-vm.sh RESULTS MODULE BUNDLE [CHROOT]
#        in-vm.sh RESULTS MODULE --bin DIR   (carkey-agent and carkey from DIR: agent-checks.sh)
#   writes RESULTS/setup.txt ("setup ok ..." or "setup failed: why"), RESULTS/xctest.log and
#   RESULTS/lane.txt (`gpio-lane: NAME ok|FAIL ...`, `gpio-lane-end`)
set -uo pipefail
results=$1 module=$2 bundle=$3 chroot_dir=${4:-}
setup_fail() { echo "setup failed: $*" >>"$results/setup.txt"; exit 3; }

modprobe configfs 2>>"$results/setup.txt" || setup_fail "modprobe configfs"
insmod "$module" 2>>"$results/setup.txt" || setup_fail "insmod $module"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || setup_fail "mount configfs"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug || setup_fail "mount debugfs"

# One simulated device with two banks (two chips), 8 lines each, found by the tests by label.
device=/sys/kernel/config/gpio-sim/carkey
mkdir "$device" || setup_fail "mkdir $device"
for bank in 0 1; do
    mkdir "$device/bank$bank" && echo 8 >"$device/bank$bank/num_lines" \
        && echo "carkey-sim-$bank" >"$device/bank$bank/label" || setup_fail "bank$bank"
done
echo 1 >"$device/live" || setup_fail "gpio-sim device did not go live"
echo "setup ok: $(cat "$device/dev_name"): $(cat "$device/bank0/chip_name") $(cat "$device/bank0/label"), $(cat "$device/bank1/chip_name") $(cat "$device/bank1/label")" >>"$results/setup.txt"

if [[ $bundle == --bin ]]; then
    bin=$chroot_dir started=$(date +%s.%N)
    source "$(dirname "${BASH_SOURCE[0]}")/agent-checks.sh"
    echo "gpio-lane-time: checks $(awk -v a="$(date +%s.%N)" -v b="$started" 'BEGIN { printf "%.1f", a - b }') s" >>"$results/lane.txt"
    echo "gpio-lane-end" >>"$results/lane.txt"
    exit 0
fi
run=("$bundle" DriversTests.GPIOKernelTests)
if [[ -n $chroot_dir ]]; then
    # The bundle was built in the chroot against its libraries (libgpiod v2): run it there,
    # with this kernel's /dev and /sys (configfs, debugfs and the gpio-sim attributes).
    for fs in dev sys proc; do mount --rbind "/$fs" "$chroot_dir/$fs" || setup_fail "bind /$fs into $chroot_dir"; done
    run=(chroot "$chroot_dir" "${bundle#"$chroot_dir"}" DriversTests.GPIOKernelTests)
fi
started=$(date +%s.%N)
CARKEY_GPIO_KERNEL=$device "${run[@]}" >"$results/xctest.log" 2>&1
status=$?
seconds=$(awk -v a="$(date +%s.%N)" -v b="$started" 'BEGIN { printf "%.1f", a - b }')

# "Test Case 'GPIOKernelTests.testName' passed (0.012 seconds)" -> "gpio-lane: testName ok (...)";
# failed or skipped -> FAIL with the test's own messages for that case.
sed -nE "s/^Test Case '(DriversTests\.)?GPIOKernelTests\.([A-Za-z0-9_]+)' (passed|failed|skipped).*/\2 \3/p" "$results/xctest.log" |
while read -r name outcome; do
    if [[ $outcome == passed ]]; then
        echo "gpio-lane: $name ok"
    else
        why=$(grep -F "GPIOKernelTests.$name" "$results/xctest.log" | grep -E 'error|skipped' | head -3 | sed 's/.*error: //' | tr '\n' ' ')
        echo "gpio-lane: $name FAIL: $outcome $why"
    fi
done >>"$results/lane.txt"
echo "gpio-lane-time: tests ${seconds} s (xctest exit $status)" >>"$results/lane.txt"
echo "gpio-lane-end" >>"$results/lane.txt"

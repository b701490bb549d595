#!/usr/bin/env bash
# The test suite under AddressSanitizer or ThreadSanitizer (make test-asan / make test-tsan).
#   scripts/sanitize.sh address|thread [swift test arguments, e.g. --filter CloudAgentTests]
#
# Builds everything (tests, carkey-agent, carkey, the storage crasher) instrumented in its own
# scratch path ($SCRATCH-asan / $SCRATCH-tsan, or SANITIZE_SCRATCH), so the agents the end-to-end
# tests spawn are instrumented too (checked below with nm). Every instrumented process, test
# runner and subprocess alike, writes its reports to files under $scratch/sanitizer-logs
# (log_path: one file per pid), because a subprocess's stderr is read by few tests and some
# tests inspect it. After the run any report file fails the run and is printed, even when every
# test passed. Prints the test counts and the wall time.
#
# Skipped under a sanitizer, each with its reason printed: the qemu VM lanes (GPIO, BLE) and,
# as in make test, the fleet run. CARKEY_REQUIRE_ARTIFACTS is cleared: the static and aarch64
# artifacts cannot be instrumented builds, and make test already requires them.
set -uo pipefail

mode=${1:-}
case $mode in
    address) short=asan ;;
    thread) short=tsan ;;
    *) echo "usage: scripts/sanitize.sh address|thread [swift test arguments]" >&2; exit 2 ;;
esac
shift

cd "$(dirname "$0")/.."
root=$PWD
if ! command -v swift >/dev/null 2>&1; then export PATH=/opt/swift/usr/bin:$PATH; fi
export OPENCARKEY_SHARED=${OPENCARKEY_SHARED:-$(cd .. && pwd)/shared}

scratch=${SANITIZE_SCRATCH:-${SCRATCH:-.build}-$short}
logs=$(mkdir -p "$scratch" && cd "$scratch" && pwd)/sanitizer-logs
rm -rf "$logs" && mkdir -p "$logs"
started=$(date +%s)

say() { echo "sanitize($short): $*"; }

skip() { say "skipped: $1"; }
export CARKEY_GPIO_LANE=0; skip "GPIOKernelLaneTests (CARKEY_GPIO_LANE=0): boots a qemu VM and runs the bundle inside it; emulation on top of the sanitizer's slowdown is past the lane's time limits. Its code runs in-process in the GPIO*Tests"
export CARKEY_BLE_LANE=0; skip "BLEVirtualMachineTests (CARKEY_BLE_LANE=0): the same, a qemu VM with virtual controllers; the link code runs in-process in BlueZ*Tests"
unset CARKEY_FLEET; skip "FleetTests (CARKEY_FLEET unset): off by default as in make test (make fleet runs it)"
unset CARKEY_REQUIRE_ARTIFACTS CARKEY_REQUIRE_AARCH64
skip "artifact tests (DebianPackageTests, Aarch64StaticTests) skip without build/static and build/aarch64: those are release builds, not instrumented"

# Reports go to $logs/<tool>.<pid>. ASan stops a process at its first error (its default);
# TSan keeps going so one run lists every race, and a process with a report exits 66.
# Suppressions: scripts/sanitizer-suppressions-<mode>.txt, every entry with its reason.
suppressions=$root/scripts/sanitizer-suppressions-$mode.txt
case $mode in
    address)
        # LeakSanitizer on for every product process the tests spawn (carkey-agent, carkey, the
        # crasher): each is checked at its exit. The test runner itself opts out
        # (Tests/Harness/LeakCheckScope.swift): it ends holding XCTest's objects and the fixtures
        # tests keep. SANITIZE_LEAKS=0 turns the checks off.
        # quarantine_size_mb=8 (default 256): freed memory sits in the quarantine, so RSS grew
        # 165 MB in AttackCloudFloodTests' bound of 20 MB; 8 MB still catches a use soon after free.
        export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=${SANITIZE_LEAKS:-1}:quarantine_size_mb=8:strict_string_checks=1:check_initialization_order=1"
        [[ -f $suppressions ]] && export LSAN_OPTIONS="suppressions=$suppressions"
        # AttackCloudFloodTests bounds the agent's RSS growth at 20 MB; instrumented it grew
        # 24 MB (quarantine, allocator caches, shadow) where the plain build grows 0.
        export CARKEY_SANITIZER_RSS_SLACK_MIB=${CARKEY_SANITIZER_RSS_SLACK_MIB:-40}
        # Latency deadlines that measure the design (the owner's session within 1 s during an
        # attack) are scaled by this (Tests/Harness/SanitizerAllowance.swift).
        export CARKEY_SANITIZER_TIME_SCALE=${CARKEY_SANITIZER_TIME_SCALE:-2}
        [[ ${SANITIZE_LEAKS:-1} == 1 ]] || skip "leak checks (SANITIZE_LEAKS=0)"
        ;;
    thread)
        export TSAN_OPTIONS="log_path=$logs/tsan:halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=4"
        [[ -f $suppressions ]] && export TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$suppressions"
        # TSan keeps shadow and history for every block: ASan's slack doubled (not measured).
        export CARKEY_SANITIZER_RSS_SLACK_MIB=${CARKEY_SANITIZER_RSS_SLACK_MIB:-80}
        # The owner's handshakes under the Hello flood: 8/15 within 1 s, every one within 2.8 s
        # (median 857 ms) with the test process's phone crypto instrumented too.
        export CARKEY_SANITIZER_TIME_SCALE=${CARKEY_SANITIZER_TIME_SCALE:-4}
        ;;
esac

say "building with --sanitize=$mode in $scratch"
if ! swift build --build-tests --sanitize="$mode" --scratch-path "$scratch"; then
    say "FAILED: build"; exit 1
fi

# The agents the end-to-end tests spawn must be the instrumented ones.
products=$(swift build --sanitize="$mode" --scratch-path "$scratch" --show-bin-path)
# The PKCS#11 vault's helper beside the agents and the test bundle (not instrumented: C, and a
# separate process; docs/pkcs11-bridge.md).
"$(dirname "${BASH_SOURCE[0]}")/../tools/pkcs11-bridge/build.sh" "$products/carkey-pkcs11-bridge" cc $(pkg-config --cflags p11-kit-1)
symbol=$([[ $mode == thread ]] && echo __tsan_init || echo __asan_init)
for binary in carkey-agent carkey carkey-storage-crasher; do
    if [[ $(nm "$products/$binary" 2>/dev/null | grep -c "$symbol") == 0 ]]; then
        say "FAILED: $products/$binary has no $symbol: not instrumented"; exit 1
    fi
done
say "instrumented ($symbol): carkey-agent carkey carkey-storage-crasher in $products"

output=$logs/../sanitize-test-output.txt
say "swift test --sanitize=$mode $*"
swift test --skip-build --sanitize="$mode" --scratch-path "$scratch" "$@" 2>&1 | tee "$output"
status=${PIPESTATUS[0]}

# Counted from the per-test lines: a process killed by a report prints no final summary.
count() { grep -cE "^Test Case '[^']+' $1 \(" "$output"; }
summary="tests run $(( $(count passed) + $(count failed) + $(count skipped) )): passed $(count passed), skipped $(count skipped), failed $(count failed)"
failed_tests=$(grep -oE "Test Case '[^']+' failed" "$output" | sort -u)
unfinished=$(grep -oE "^Test Case '[^']+' started" "$output" | sed 's/ started$//' | sort | comm -23 - <(grep -oE "^Test Case '[^']+' (passed|failed|skipped)" "$output" | sed -E 's/ (passed|failed|skipped)$//' | sort))

reports=$(find "$logs" -type f -size +0 | sort)
if [[ -n $reports ]]; then
    say "sanitizer reports ($(echo "$reports" | wc -l) files):"
    for file in $reports; do
        echo "----- $file"
        cat "$file"
    done
    echo "-----"
fi

elapsed=$(( $(date +%s) - started ))
say "$summary"
[[ -n $failed_tests ]] && echo "$failed_tests"
[[ -n $unfinished ]] && say "started but never finished (the process died): $unfinished"
say "wall time $((elapsed / 60)) min $((elapsed % 60)) s"
if [[ -n $reports ]]; then say "FAILED: $(echo "$reports" | wc -l) sanitizer report file(s) above"; exit 1; fi
if [[ $status != 0 ]]; then say "FAILED: swift test exited $status"; exit 1; fi
say "passed, no sanitizer reports"

# Helpers for the lane's guest scripts (sourced by in-vm.sh).
now() { date +%s.%N; }
ms_since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.0f", (a - b) * 1000 }'; }

# Result lines, one per scenario, read by run-lane.sh and the lane's tests (BLEVirtualMachineTests;
# the GPIO lane's agent checks, scripts/gpio-vm/agent-checks.sh, set LANE_NAME=gpio-lane).
pass() { echo "${LANE_NAME:-ble-lane}: $1 ok${2:+ ($2)}" >>"$LANE_RESULTS/lane.txt"; }
fail() { echo "${LANE_NAME:-ble-lane}: $1 FAIL: $2" >>"$LANE_RESULTS/lane.txt"; }
timing() { echo "${LANE_NAME:-ble-lane}-time: $*" >>"$LANE_RESULTS/lane.txt"; }

# run_logged NAME CMD...: runs CMD with stdout/stderr in RESULTS/NAME.out/.err; sets $out,
# $err (their text) and $rc.
run_logged() {
    local name=$1; shift
    "$@" >"$LANE_RESULTS/$name.out" 2>"$LANE_RESULTS/$name.err"
    rc=$?
    out=$(cat "$LANE_RESULTS/$name.out")
    err=$(cat "$LANE_RESULTS/$name.err")
}

# wait_for SECONDS FILE PATTERN: until an extended regular expression appears in FILE.
wait_for() {
    local deadline=$(( $(date +%s) + $1 ))
    while [[ $(date +%s) -le $deadline ]]; do
        grep -Eq "$3" "$2" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# count_matches FILE PATTERN
count_matches() { grep -Ec "$2" "$1" 2>/dev/null || true; }

# advertising_instances INDEX: how many advertising instances the kernel holds for hciINDEX.
advertising_instances() {
    btmgmt --index "$1" advinfo 2>/dev/null | sed -n 's/.*Instances list with \([0-9]*\) item.*/\1/p' | head -1
}

# ms_field TEXT PATTERN: the number after PATTERN (e.g. "found .* after ") in TEXT.
number_after() { grep -Eo "$2[0-9]+" <<<"$1" | grep -Eo '[0-9]+$' | head -1; }

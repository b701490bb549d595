#!/usr/bin/env bash
# Smoke test of the static aarch64 binaries under qemu-aarch64-static, with no arm64 root
# filesystem (QEMU_LD_PREFIX is an empty folder: a static binary needs none).
#
# Usage: scripts/aarch64/smoke.sh [DIR]    (default build/aarch64; DIR holds carkey-agent, carkey)
#
# One line per check, "smoke: ok NAME: detail" or "smoke: FAIL NAME: detail", then two sanity
# figures (not performance claims: everything runs under instruction-set emulation):
#   smoke: figure startup-ms N   exec of the agent to its "control socket" line, which it prints
#                                once it serves phones, just before telling systemd READY=1
#   smoke: figure idle-rss-kb N  VmRSS of the qemu-aarch64-static process running the agent,
#                                idle after the session: qemu's RSS (emulator, translated code
#                                cache and the agent together), not the agent's alone
# and "smoke: N passed, M failed". Exit status 1 when any check fails, 2 on bad usage.
# Checks: both files are static aarch64 executables; `carkey-agent --version`; the self-test
# (`carkey-agent demo`); `carkey keygen`; `carkey-agent run --simulate` serves; one phone
# enrolled through the pairing window (`carkey-agent pair`, `carkey phone ... enroll`) and one
# unlock session by the aarch64 `carkey`; the unlock is in the event log; SIGTERM, exit 0.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:-$repo/build/aarch64}
[[ $# -le 1 ]] || { echo "usage: $0 [DIR]" >&2; exit 2; }
qemu=${QEMU_AARCH64:-$(command -v qemu-aarch64-static || true)}
limit=${SMOKE_TIMEOUT_SECONDS:-120}   # per command; emulation of a 20 MB binary is slow

passed=0; failed=0
ok()   { echo "smoke: ok $1: $2"; passed=$((passed + 1)); }
fail() { echo "smoke: FAIL $1: $2"; failed=$((failed + 1)); }
finish() {
    echo "smoke: $passed passed, $failed failed"
    [[ $failed -eq 0 ]] && exit 0 || exit 1
}

work=$(mktemp -d /tmp/ock-smoke.XXXXXX)
agent_pid=
cleanup() {
    [[ -n $agent_pid ]] && kill -KILL "$agent_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
empty_root=$work/empty-root; mkdir -p "$empty_root"
export QEMU_LD_PREFIX=$empty_root

if [[ -z $qemu || ! -x $qemu ]]; then
    fail qemu "qemu-aarch64-static not found (Debian package qemu-user-static)"; finish
fi

# ---- the files --------------------------------------------------------------------------
for name in carkey-agent carkey; do
    if [[ ! -f $dir/$name ]]; then fail "file $name" "$dir/$name is missing"; continue; fi
    description=$(file -bL "$dir/$name")
    if [[ $description == *"ARM aarch64"* && $description == *"statically linked"* ]]; then
        ok "file $name" "${description%%, BuildID*}"
    else
        fail "file $name" "not a static aarch64 executable: $description"
    fi
done
[[ $failed -eq 0 ]] || finish   # nothing else can be meaningful

agent=$dir/carkey-agent; tool=$dir/carkey
run() { timeout "$limit" "$qemu" "$@"; }

# ---- one-shot commands ---------------------------------------------------------------------
version=$(run "$agent" --version 2>&1); status=$?
if [[ $status -eq 0 && $version =~ ^carkey-agent\ [0-9] ]]; then ok version "$version"
else fail version "exit $status: $version"; fi

demo=$(run "$agent" demo 2>&1); status=$?
summary=$(grep '^crypto self-test: [0-9]* passed, [0-9]* failed' <<<"$demo")
if [[ $status -eq 0 && $summary =~ ^crypto\ self-test:\ [1-9][0-9]*\ passed,\ 0\ failed$ ]]; then ok self-test "${summary#crypto self-test: }"
else fail self-test "exit $status: ${summary:-$(tail -n 3 <<<"$demo")}"; fi

public=$(run "$tool" keygen --out "$work/owner.pem" 2>&1); status=$?
public=${public//[[:space:]]/}
# The SEC1 uncompressed P-256 point: 04, then 64 bytes.
if [[ $status -eq 0 && $public =~ ^04[0-9a-f]{128}$ ]] && grep -q 'PRIVATE KEY' "$work/owner.pem"; then ok keygen "public key ${public:0:16}..."
else fail keygen "exit $status: $public"; fi

# ---- the agent with one phone ---------------------------------------------------------------
state=$work/state
start_ns=$(date +%s%N)
"$qemu" "$agent" run --simulate --state-dir "$state" --clock-sync no >"$work/agent.out" 2>"$work/agent.err" &
agent_pid=$!
serving=0
for _ in $(seq 1 $((limit * 50))); do
    if grep -q '^carkey-agent: control socket' "$work/agent.err" 2>/dev/null && [[ -S $state/ble.sock ]]; then serving=1; break; fi
    kill -0 "$agent_pid" 2>/dev/null || break
    sleep 0.02
done
startup_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
if [[ $serving -eq 1 ]]; then ok run "serving on $state/ble.sock"
else fail run "did not serve: $(tail -n 3 "$work/agent.out" "$work/agent.err" | tr '\n' ' ')"; finish; fi

pair=$(run "$agent" pair --state-dir "$state" 2>&1); status=$?
code=$(sed -n 's/^code //p' <<<"$pair")
if [[ $status -eq 0 && -n $code ]]; then ok pair "pairing window open"
else fail pair "exit $status: $pair"; fi

phone=("$tool" phone --key "$work/owner.pem" --connect "unix:$state/ble.sock")
enroll=$(run "${phone[@]}" --car-key "@$state/car-identity.pub" --vehicle OCK-SIM-0001 enroll --code "$code" 2>&1); status=$?
if [[ $status -eq 0 && $enroll == enrolled* ]]; then ok enroll "$(head -n 1 <<<"$enroll")"
else fail enroll "exit $status: $enroll"; fi

unlock=$(run "${phone[@]}" unlock 2>&1); status=$?
if [[ $status -eq 0 && $(head -n 1 <<<"$unlock") == ok ]]; then ok unlock "session complete, car answered ok"
else fail unlock "exit $status: $unlock"; fi

# The agent logs the unlock after the phone has gone: give it a moment.
events=
for _ in $(seq 1 50); do
    events=$(run "$agent" events --state-dir "$state" 2>&1)
    grep -qi 'unlock' <<<"$events" && break
    sleep 0.2
done
if grep -qi 'unlock' <<<"$events"; then ok events "$(grep -i 'unlock' <<<"$events" | tail -n 1 | tr -s ' ')"
else fail events "no unlock in the event log: $(tail -n 3 <<<"$events" | tr '\n' ' ')"; fi

sleep 1   # idle: no phone, loop waiting on its tick
rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$agent_pid/status" 2>/dev/null)

kill -TERM "$agent_pid"
exit_status=
for _ in $(seq 1 $((limit * 10))); do
    if ! kill -0 "$agent_pid" 2>/dev/null; then wait "$agent_pid"; exit_status=$?; break; fi
    sleep 0.1
done
if [[ -z $exit_status ]]; then fail sigterm "still running after ${limit}s"
elif [[ $exit_status -eq 0 ]]; then ok sigterm "clean exit (status 0)"
else fail sigterm "exit status $exit_status: $(tail -n 3 "$work/agent.err" | tr '\n' ' ')"; fi
agent_pid=

echo "smoke: figure startup-ms $startup_ms (exec to 'control socket' line, under qemu-aarch64-static)"
echo "smoke: figure idle-rss-kb ${rss_kb:-unknown} (VmRSS of the qemu-aarch64-static process: qemu's RSS, agent included)"
finish

#!/usr/bin/env bash
# `make run`: the car side of OpenCarKey, end to end, in a few seconds.
#
# Starts a simulated car (simulated GPIO chip, phones over a Unix socket) in a temporary state
# directory, then plays a short story with the real command-line tools:
#   an owner pairs a phone with the one-time code, unlocks and locks; shares an unlock-only key
#   with a friend; the friend unlocks but is refused the trunk; the owner revokes the share and
#   the friend is refused from then on.
# It prints a timeline (time, who, command, result, which GPIO line moved) read from the phones'
# answers and the agent's log, and exits non-zero if any step does not behave as expected, so
# it doubles as a smoke test.
#
# Usage: scripts/demo.sh [BIN_DIR]   (default .build/debug; the Makefile passes its scratch path)
#        KEEP=1 scripts/demo.sh      keeps the temporary folder (state, keys, agent log)
set -uo pipefail

BIN=${1:-.build/debug}
AGENT="$BIN/carkey-agent"
CARKEY="$BIN/carkey"
VEHICLE=OCK-SIM-0001
for tool in "$AGENT" "$CARKEY"; do
    [[ -x $tool ]] || { echo "demo: $tool not found; run 'make build' first" >&2; exit 2; }
done

WORK=$(mktemp -d /tmp/opencarkey-demo-XXXXXX)
STATE="$WORK/state"
LOG="$WORK/agent.log"
AGENT_PID=""
FAILURES=0
TIMELINE=()

cleanup() {
    if [[ -n $AGENT_PID ]] && kill -0 "$AGENT_PID" 2>/dev/null; then
        kill -TERM "$AGENT_PID" 2>/dev/null
        wait "$AGENT_PID" 2>/dev/null
    fi
    if [[ ${KEEP:-0} == 1 || $FAILURES -gt 0 ]]; then
        echo "demo: files kept in $WORK (agent log: $LOG)"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

say() { printf '\n== %s\n' "$*"; }
now() { date +%H:%M:%S.%3N; }

# The GPIO line the agent pulsed since log line $1, e.g. "unlock (sim-gpio line 27)", or "-".
line_moved() {
    local moved
    moved=$(tail -n +"$(( $1 + 1 ))" "$LOG" \
        | sed -n 's/.*pulsed on \([A-Za-z]*\) (chip \([^,]*\), line \([0-9]*\)).*/\1 (\2 line \3)/p' | paste -sd, -)
    echo "${moved:--}"
}

# step ACTOR COMMAND EXPECTED-FIRST-LINE -- carkey phone arguments...
# Runs one phone command, checks its first output line, and adds a timeline row.
step() {
    local actor=$1 command=$2 expected=$3
    shift 4
    local before at output result verdict
    before=$(wc -l < "$LOG")
    at=$(now)
    # stdout carries the result ("ok", "fault: NAME (CODE)"); stderr the phone's explanation.
    output=$("$CARKEY" phone "$@" 2> "$WORK/phone.err")
    result=$(head -n 1 <<< "$output")
    if [[ $result == "$expected" ]]; then verdict=ok; else verdict="UNEXPECTED (wanted: $expected)"; FAILURES=$((FAILURES + 1)); fi
    printf '   %-7s %-7s -> %s\n' "$actor" "$command" "$result"
    [[ $verdict == ok ]] || { echo "   demo: $verdict"; cat - "$WORK/phone.err" <<< "$output" | sed 's/^/   | /'; }
    TIMELINE+=("$(printf '%-12s  %-7s  %-7s  %-33s  %-26s  %s' "$at" "$actor" "$command" "$result" "$(line_moved "$before")" "$verdict")")
}

expect() { # expect DESCRIPTION COMMAND... : a setup step that must succeed
    local description=$1
    shift
    if ! "$@" > "$WORK/last.out" 2>&1; then
        echo "   demo: $description failed:"; sed 's/^/   | /' "$WORK/last.out"
        FAILURES=$((FAILURES + 1))
        return 1
    fi
}

say "0. Crypto self-test (carkey-agent demo)"
expect "the crypto self-test" "$AGENT" demo && tail -n 1 "$WORK/last.out" | sed 's/^/   /'

say "1. Start a simulated car in $STATE"
# --clock-sync yes: treat this machine's clock as NTP-synchronised, so the car trusts its time
# and accepts the friend's time-limited share (an untrusted clock refuses those: clockNotTrusted).
# The agent logs on stderr, its start-up report included ("control socket ..." once it serves).
"$AGENT" run --simulate --state-dir "$STATE" --vehicle "$VEHICLE" --clock-sync yes --console none 2> "$LOG" &
AGENT_PID=$!
for _ in $(seq 1 200); do
    [[ -S $STATE/control.sock && -S $STATE/ble.sock ]] && grep -q "control socket" "$LOG" && break
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.05
done
if ! [[ -S $STATE/control.sock ]]; then
    echo "demo: the agent did not start:"; sed 's/^/   | /' "$LOG"
    FAILURES=$((FAILURES + 1)); exit 1
fi
grep -E "GPIO|listening on" "$LOG" | sed 's/^carkey-agent: /   /'

say "2. The owner pairs a phone: the car opens its pairing window (carkey-agent pair)"
expect "owner keygen" "$CARKEY" keygen --out "$WORK/owner.pem"
expect "carkey-agent pair" "$AGENT" pair --state-dir "$STATE"
CODE=$(sed -n 's/^code //p' "$WORK/last.out")
echo "   the car shows code ${CODE:-?} (single use, 60 s); the owner types it on the phone"
step owner enroll enrolled -- --key "$WORK/owner.pem" --connect "unix:$STATE/ble.sock" enroll --code "${CODE:-000000}"

say "3. The owner unlocks and locks"
OWNER=(--key "$WORK/owner.pem" --connect "unix:$STATE/ble.sock")
step owner unlock ok -- "${OWNER[@]}" unlock
step owner lock ok -- "${OWNER[@]}" lock

say "4. The owner shares an unlock-only key with a friend for one day (carkey share)"
expect "friend keygen" "$CARKEY" keygen --out "$WORK/friend.pem"
FRIEND_PUB=$(tr -d '[:space:]' < "$WORK/last.out")
expect "carkey share" "$CARKEY" share --key "$WORK/owner.pem" --holder "$FRIEND_PUB" --vehicle "$VEHICLE" \
    --permissions unlock-only --not-after "$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)" --out "$WORK/friend.share"
SERIAL=$(sed -n 's/^serial //p' "$WORK/last.out")
echo "   share serial ${SERIAL:-?}: the certificate travels to the friend's phone (here: a file)"
FRIEND=(--key "$WORK/friend.pem" --connect "unix:$STATE/ble.sock" --car-key "@$STATE/car-identity.pub" --vehicle "$VEHICLE")

say "5. The friend unlocks (presenting the share once), and is refused the trunk"
step friend unlock ok -- "${FRIEND[@]}" --share "$WORK/friend.share" unlock
step friend trunk "fault: insufficientPermission (5)" -- "${FRIEND[@]}" trunk

say "6. The owner revokes the share (carkey revoke, sent from the owner's phone)"
expect "carkey revoke" "$CARKEY" revoke --key "$WORK/owner.pem" --vehicle "$VEHICLE" --serial "${SERIAL:-00}" --out "$WORK/friend.revoke"
step owner revoke ok -- "${OWNER[@]}" revoke --object "$WORK/friend.revoke"

say "7. The friend is refused from now on"
step friend unlock "fault: revoked (2)" -- "${FRIEND[@]}" unlock

say "8. Stop the car (SIGTERM: sessions closed, lines released at their safe level)"
kill -TERM "$AGENT_PID"
wait "$AGENT_PID"
STATUS=$?
AGENT_PID=""
if [[ $STATUS -eq 0 ]]; then echo "   stopped cleanly"; else echo "   demo: the agent exited with $STATUS"; FAILURES=$((FAILURES + 1)); fi

say "9. A car with a UWB module (--simulate-uwb: register-level DW3000s, the phone's radio simulated)"
STATE2="$WORK/state-uwb"
FIRST_RUN_LINES=$(wc -l < "$LOG")
"$AGENT" run --simulate --simulate-uwb --state-dir "$STATE2" --vehicle "$VEHICLE" --clock-sync yes --console none 2>> "$LOG" &
AGENT_PID=$!
for _ in $(seq 1 200); do
    tail -n +$((FIRST_RUN_LINES + 1)) "$LOG" | grep -q "control socket" && break
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.05
done
tail -n +$((FIRST_RUN_LINES + 1)) "$LOG" | grep -E "uwb:" | sed 's/^carkey-agent: /   /'
expect "owner keygen (UWB car)" "$CARKEY" keygen --out "$WORK/owner2.pem"
expect "carkey-agent pair (UWB car)" "$AGENT" pair --state-dir "$STATE2"
CODE=$(sed -n 's/^code //p' "$WORK/last.out")
step owner enroll enrolled -- --key "$WORK/owner2.pem" --connect "unix:$STATE2/ble.sock" enroll --code "${CODE:-000000}"
OWNER2=(--key "$WORK/owner2.pem" --connect "unix:$STATE2/ble.sock" --uwb)
sim() { expect "sim $*" "$AGENT" sim --state-dir "$STATE2" "$@" && sed 's/^/   /' "$WORK/last.out"; }
sim uwb place 12
step owner unlock "fault: notInProximity (32)" -- "${OWNER2[@]}" unlock
echo "   the owner walks from 6 m to the door at 2.5 m/s, the phone ranging at 20 Hz"
sim uwb walk 6 0.8 2.5
step owner unlock ok -- "${OWNER2[@]}" --uwb-wait 2600 unlock
step owner lock ok -- "${OWNER2[@]}" lock
echo "   the owner is in a cafe 100 m away, out of radio range; two attackers relay phone and car to each other"
sim uwb place 100
sim uwb relay on 104
step relay unlock "fault: notInProximity (32)" -- "${OWNER2[@]}" unlock
echo "   the car's record of what distance decided (carkey-agent events, proximity rows)"
"$AGENT" events --state-dir "$STATE2" 2>&1 | grep -E "proximity" | sed 's/^/   /'
kill -TERM "$AGENT_PID"
wait "$AGENT_PID"
AGENT_PID=""

say "Timeline (result as the phone saw it; the GPIO line from the agent's log)"
printf '%-12s  %-7s  %-7s  %-33s  %-26s  %s\n' TIME ACTOR COMMAND RESULT "GPIO LINE MOVED" CHECK
printf '%s\n' "${TIMELINE[@]}"

say "Keys on the car (carkey-agent keys: IDs, roles, permissions; never key material)"
"$AGENT" keys --state-dir "$STATE" 2>&1 | sed 's/^/   /'

say "The car's own record (carkey-agent events, sessions left out)"
"$AGENT" events --state-dir "$STATE" 2>&1 | grep -v -E '  session  ' | sed 's/^/   /'

echo
if [[ $FAILURES -eq 0 ]]; then
    echo "demo: every step behaved as expected"
else
    echo "demo: $FAILURES step(s) did not behave as expected" >&2
    exit 1
fi

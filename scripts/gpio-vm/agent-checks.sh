# The GPIO lane's checks with the shipped binaries (sourced by in-vm.sh when it is given --bin
# instead of a test bundle: the arm64 lane, which has the static aarch64 carkey-agent and carkey
# but no aarch64 test bundle). carkey-agent runs on a board file whose lines are gpio-sim's
# bank 0; a phone on the agent's Unix socket unlocks and locks; the lines are read and pulled
# through gpio-sim's sysfs attributes. Needs: $results, $device (the gpio-sim configfs device),
# $bin. Writes `gpio-lane: NAME ok|FAIL ...` lines (scripts/ble-vm/lib.sh with LANE_NAME).
export LANE_NAME=gpio-lane LANE_RESULTS=$results PATH=$bin:$PATH
source "$(dirname "${BASH_SOURCE[0]}")/../ble-vm/lib.sh"
VEHICLE=OCK-SIM-0001 STATE=/tmp/car-state PHONE=/tmp/phone.pem AGENT_LOG=$results/agent.log
chip=$(cat "$device/bank0/chip_name")
lines=/sys/devices/platform/$(cat "$device/dev_name")/$chip
value() { cat "$lines/sim_gpio$1/value"; }
# Bank 0 (label carkey-sim-0): outputs on 0-3, inputs on 4-6.
output_line() { printf '"%s": { "chip": "carkey-sim-0", "line": %d, "activeLow": false, "bias": "pull-down" }' "$1" "$2"; }
input_line() { printf '"%s": { "chip": "carkey-sim-0", "line": %d, "activeLow": true, "bias": "pull-up" }' "$1" "$2"; }
cat >"$results/board.json" <<JSON
{ "name": "gpio-sim", "description": "The GPIO lane: gpio-sim bank 0", "pulseWidthMillis": 300,
  "debounceMillis": 30, "pairingHoldMillis": 5000, "feedbackSettleMillis": 100,
  "outputs": { $(output_line lock 0), $(output_line unlock 1), $(output_line trunkRelease 2), $(output_line feedbackLight 3) },
  "inputs": { $(input_line doorOpen 4), $(input_line trunkOpen 5), $(input_line pairingButton 6) } }
JSON
agent() { carkey-agent run --board "$results/board.json" --vehicle "$VEHICLE" "$@"; }

# lines: the agent requests every line of the board at its inactive level, named carkey:ROLE.
rm -rf "$STATE"
agent --state-dir "$STATE" >"$AGENT_LOG" 2>&1 &
agent_pid=$!
if ! wait_for 120 "$AGENT_LOG" 'control socket'; then
    fail lines "agent did not start: $(tail -n 5 "$AGENT_LOG" | tr '\n' ' ')"
else
    held=$(grep -c 'carkey:' /sys/kernel/debug/gpio)
    levels=$(for line in 0 1 2 3; do value $line; done | tr -d '\n')
    if [[ $held -ne 7 || $levels != 0000 ]]; then
        fail lines "$held of 7 lines held as carkey:ROLE, outputs at $levels: $(grep carkey: /sys/kernel/debug/gpio | tr -s ' ' | tr '\n' ';')"
    else
        pass lines "7 lines held as carkey:ROLE on $chip, outputs inactive"
    fi
fi

# pulses: an unlock and a lock from a phone on the agent's socket pulse their lines (300 ms).
# A sampler polls the line's value in sysfs and notes each change with the time; bash builtins
# only (read, $EPOCHREALTIME): a cat and a date per sample took over 300 ms under a loaded TCG.
sample() {  # LINE FILE: until FILE.stop exists
    local file=$lines/sim_gpio$1/value last="" now_value
    while [[ ! -e $2.stop ]]; do
        read -r now_value <"$file"
        if [[ $now_value != "$last" ]]; then echo "$EPOCHREALTIME $now_value" >>"$2"; last=$now_value; fi
    done
}
pulse() {  # NAME LINE COMMAND
    local name=$1 line=$2 command=$3 trace=$results/$1.trace
    rm -f "$trace" "$trace.stop"
    sample "$line" "$trace" & local sampler=$!
    sleep 0.5
    run_logged "$name" carkey phone --connect "unix:$STATE/ble.sock" --key "$PHONE" --timeout 60 "$command"
    sleep 1; touch "$trace.stop"; wait "$sampler"
    local changes width
    changes=$(awk '{ printf "%s", $2 }' "$trace")
    width=$(awk 'NR == 2 { a = $1 } NR == 3 { printf "%.0f", ($1 - a) * 1000 }' "$trace")
    if [[ $rc -ne 0 || ${out%%$'\n'*} != ok ]]; then fail "$name" "phone: exit $rc: $out $err"
    elif [[ $changes != 010 ]]; then fail "$name" "line $line went $changes (want 0, 1, 0)"
    elif [[ $width -lt 250 || $width -gt 1500 ]]; then fail "$name" "pulse of ${width} ms (board: 300 ms)"
    else pass "$name" "line $line pulsed ${width} ms as sampled"
    fi
}
carkey keygen --out "$PHONE" >/dev/null 2>&1
code=$(carkey-agent pair --state-dir "$STATE" 2>/dev/null | sed -n 's/^code //p')
run_logged enroll carkey phone --connect "unix:$STATE/ble.sock" --key "$PHONE" --timeout 60 enroll --code "${code:-none}"
if [[ $rc -ne 0 || ${out%%$'\n'*} != enrolled ]]; then
    fail pulse-unlock "enrollment: exit $rc: $out $err"
else
    pulse pulse-unlock 1 unlock
    pulse pulse-lock 0 lock
fi

# edges: the door input pulled low (active low: open) and back are vehicle-state events.
door_events() { carkey-agent events --state-dir "$STATE" 2>/dev/null | grep -c 'vehicle-state'; }
# pull_door PULL ABOVE: sets the pull, then up to 20 s (a loaded host) for more than ABOVE events.
pull_door() {
    echo "$1" >"$lines/sim_gpio4/pull"
    local deadline=$(( $(date +%s) + 20 )) count
    while count=$(door_events); [[ $count -le $2 && $(date +%s) -le $deadline ]]; do sleep 0.5; done
    echo "$count"
}
before=$(door_events)
opened=$(pull_door pull-down "$before")
closed=$(pull_door pull-up "$opened")
if [[ $opened -gt $before && $closed -gt $opened ]]; then
    pass edges "door open and closed: $((closed - before)) vehicle-state events"
else
    fail edges "vehicle-state events $before, after opening $opened, after closing $closed: $(carkey-agent events --state-dir "$STATE" 2>&1 | tail -n 3 | tr '\n' ' ')"
fi

# busy: a second agent on the same board stops, naming the line's holder.
run_logged busy timeout 60 carkey-agent run --board "$results/board.json" --vehicle "$VEHICLE" \
    --state-dir /tmp/second-car
if [[ $rc -eq 0 || $rc -eq 124 ]]; then fail busy "a second agent ran on held lines (exit $rc)"
elif ! grep -q 'line busy, in use by "carkey:' <<<"$out$err"; then fail busy "exit $rc without the holder: $out $err"
else pass busy "second agent: $(grep -o 'GPIO: .*' <<<"$out$err" | head -1)"
fi
kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null

# The lane's scenarios (sourced by in-vm.sh after set-up). hci0 is the car; every phone visit
# uses a fresh central. Each scenario writes one `ble-lane:` line; a failed scenario does not
# stop the ones after it unless they need what it made (then they say so).
VEHICLE=OCK-SIM-0001
CAR_ADAPTER=00:AA:01:00:00:00     # btvirt's hci0: the agent picks its adapter by address here
STATE=/tmp/car-state
PHONES=/tmp/phones
AGENT_LOG=$LANE_RESULTS/agent.log
HERE=$(dirname "${BASH_SOURCE[0]}")
agent_pid=""
car_address=""
car_address_type=""
# The handshake deadline the lane's agent runs with (the product's default is 3 s).
DEADLINE_S=30
# A link the car ends must end on the phone at once (the LE connection is terminated): well
# under the seconds the kernel takes to drop an LE connection without channels by itself.
PROMPT_MS=1500
# A phone disconnect in the agent's log: "link: phone ADDRESS (LE public) on link#N disconnected".
PHONE_LINE='link: phone [0-9A-F:]{17} \(LE (public|random)\) on link#[0-9]+ disconnected'

start_agent() {
    # The link-loss scenario holds an ATT link without a session while it reads the console
    # and then cuts the radio link: the car's 3 s handshake deadline would close it first.
    # The handshake-deadline scenario waits this one out. Everything else runs with the
    # product's defaults.
    printf '{"link":{"handshakeDeadlineSeconds":%d}}\n' "$DEADLINE_S" >"$LANE_RESULTS/agent.json"
    # Each log line gets the wall clock it was written at (the agent's own lines carry none),
    # so a scenario can set it against a phone's clock; $! stays the agent.
    carkey-agent run --config "$LANE_RESULTS/agent.json" --ble "$CAR_ADAPTER" --simulate --state-dir "$STATE" \
        --vehicle "$VEHICLE" --clock-sync yes > >(stamp_lines >>"$AGENT_LOG") 2>&1 &   # --simulate: the console on a pty (logged)
    agent_pid=$!
}

stamp_lines() {
    python3 -u -c 'import sys, time
while True:
    line = sys.stdin.readline()
    if not line:
        break
    sys.stdout.write(f"{time.time():.3f} {line}")'
}

# phone NAME ADAPTER ARGS...: `carkey phone --ble hciN --scan ARGS`, output in RESULTS/NAME.*
phone() {
    local name=$1 adapter=$2; shift 2
    local started; started=$(now)
    run_logged "$name" carkey phone --ble "$adapter" --scan --scan-timeout 30 --timeout 20 "$@"
    wall_ms=$(ms_since "$started")
    local found; found=$(grep -Eo 'found [0-9A-F:]{17} \([a-zA-Z ]+\)' <<<"$err" | head -1)
    if [[ -n $found ]]; then
        car_address=$(awk '{ print $2 }' <<<"$found")
        if [[ $found == *random* ]]; then car_address_type=random; else car_address_type=public; fi
    fi
}

scenario_agent_start() {
    rm -rf "$STATE" "$PHONES"; mkdir -p "$PHONES"
    local started; started=$(now)
    start_agent
    if ! wait_for 60 "$AGENT_LOG" 'control socket'; then
        fail start "agent did not start: $(tail -n 5 "$AGENT_LOG" | tr '\n' ' ')"; return
    fi
    if ! wait_for 60 "$AGENT_LOG" 'advertising on hci0'; then
        fail start "no advertising: $(tail -n 5 "$AGENT_LOG" | tr '\n' ' ')"; return
    fi
    local up_ms; up_ms=$(ms_since "$started")
    local instances; instances=$(advertising_instances 0)
    if [[ $instances != 1 ]]; then fail start "kernel holds ${instances:-?} advertising instances"; return; fi
    if ! grep -q "car $VEHICLE on Bluetooth LE: " "$AGENT_LOG" || ! grep -q "advertising on hci0 $CAR_ADAPTER" "$AGENT_LOG"; then
        fail start "start-up lines: $(grep 'Bluetooth LE\|advertising on' "$AGENT_LOG")"; return
    fi
    pass start "advertising ${up_ms} ms after the agent started"
}

scenario_enroll_by_uuid() {
    carkey keygen --out "$PHONES/owner.pem" >/dev/null 2>&1 || { fail enroll "keygen"; return; }
    local code; code=$(carkey-agent pair --state-dir "$STATE" 2>/dev/null | sed -n 's/^code //p')
    [[ -n $code ]] || { fail enroll "carkey-agent pair gave no code"; return; }
    phone enroll hci1 --key "$PHONES/owner.pem" enroll --code "$code"
    if [[ $rc -ne 0 || ${out%%$'\n'*} != enrolled ]]; then fail enroll "exit $rc: $out $err"; return; fi
    if ! grep -q 'by the key service UUID' <<<"$err"; then fail enroll "not found by UUID: $err"; return; fi
    if ! grep -q '^advertising-key ' "$PHONES/owner.pem.car" 2>/dev/null; then
        fail enroll "no advertising key saved with the car"; return
    fi
    pass enroll "found by UUID, car at $car_address, ${wall_ms} ms"
}

scenario_unlock_by_identifier() {
    phone unlock hci2 --key "$PHONES/owner.pem" unlock
    if [[ $rc -ne 0 || ${out%%$'\n'*} != ok ]]; then fail unlock "exit $rc: $out $err"; return; fi
    if ! grep -q 'rotating identifier resolved' <<<"$err"; then fail unlock "not found by the rotating identifier: $err"; return; fi
    local found connect setup handshake command
    found=$(number_after "$err" 'after ')
    connect=$(number_after "$err" 'connected in ')
    setup=$(number_after "$err" 'GATT ready in ')
    handshake=$(grep -Eo '^handshake ms: [0-9.]+' <<<"$out" | awk '{ print $3 }')
    command=$(grep -Eo '^command ms: [0-9.]+' <<<"$out" | awk '{ print $3 }')
    timing "scan start to unlock response: ${wall_ms} ms process wall (scan ${found} ms, connect ${connect} ms, GATT set-up ${setup} ms, handshake ${handshake} ms, unlock round trip ${command} ms)"
    pass unlock "found by rotating identifier, ${wall_ms} ms"
}

scenario_lock() {
    phone lock hci3 --key "$PHONES/owner.pem" lock
    if [[ $rc -ne 0 || ${out%%$'\n'*} != ok ]]; then fail lock "exit $rc: $out $err"; return; fi
    grep -q 'locked' <<<"$out" || { fail lock "state after lock: $out"; return; }
    timing "lock: handshake $(grep -Eo '^handshake ms: [0-9.]+' <<<"$out" | awk '{ print $3 }') ms, round trip $(grep -Eo '^command ms: [0-9.]+' <<<"$out" | awk '{ print $3 }') ms"
    pass lock
}

scenario_share_refused_trunk() {
    carkey keygen --out "$PHONES/friend.pem" >"$LANE_RESULTS/friend-keygen.out" 2>&1 || { fail share "keygen"; return; }
    local holder; holder=$(head -1 "$LANE_RESULTS/friend-keygen.out")   # keygen prints the SEC1 public key
    local until; until=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
    run_logged share-make carkey share --key "$PHONES/owner.pem" --holder "$holder" --vehicle "$VEHICLE" \
        --permissions unlock-only --not-after "$until" --out "$PHONES/friend.share"
    [[ $rc -eq 0 ]] || { fail share "carkey share: $out $err"; return; }
    phone share-trunk hci4 --key "$PHONES/friend.pem" --car-key "@$STATE/car-identity.pub" --vehicle "$VEHICLE" \
        --share "$PHONES/friend.share" trunk
    if [[ ${out%%$'\n'*} != 'fault: insufficientPermission (5)' ]]; then fail share "trunk with an unlock-only share: exit $rc: $out $err"; return; fi
    pass share "unlock-only share refused the trunk: ${out%%$'\n'*}"
}

scenario_link_loss() {
    [[ -n $car_address ]] || { fail link-loss "no car address from an earlier scan"; return; }
    local before; before=$(count_matches "$AGENT_LOG" 'closed: link lost')
    local lost_before; lost_before=$(count_matches "$AGENT_LOG" "$PHONE_LINE: link lost")
    python3 "$HERE/att-hold.py" --adapter 5 --car "$car_address" --type "$car_address_type" --hold 30 \
        >"$LANE_RESULTS/link-loss-hold.out" 2>&1 &
    local hold_pid=$!
    if ! wait_for 45 "$LANE_RESULTS/link-loss-hold.out" '^mtu '; then
        kill "$hold_pid" 2>/dev/null; fail link-loss "no ATT link: $(cat "$LANE_RESULTS/link-loss-hold.out" | tr '\n' ' ')"; return
    fi
    local handle; handle=$(hcitool -i hci5 con 2>/dev/null | sed -n 's/.*handle \([0-9]*\).*/\1/p' | head -1)
    [[ -n $handle ]] || { kill "$hold_pid" 2>/dev/null; fail link-loss "no connection handle on hci5"; return; }
    # The link's RSSI on the console (read with mgmt Get Connection Information; btvirt says -1).
    local pty; pty=$(sed -n 's/.*console on \(\/dev\/pts\/[0-9]*\).*/\1/p' "$AGENT_LOG" | tail -1)
    local links; links=$(python3 "$HERE/console-ask.py" "$pty" links 1.5 2>&1)
    echo "$links" >"$LANE_RESULTS/link-loss-console.out"
    local rssi; rssi=$(grep -Eo 'rssi -?[0-9]+ dBm' <<<"$links" | head -1)
    [[ -n $rssi ]] || { kill "$hold_pid" 2>/dev/null; fail link-loss "console links shows no RSSI: $(tr '\n' ' ' <<<"$links")"; return; }
    # Reason 0x08 (connection timeout): btvirt passes it to the car's side as a supervision timeout.
    local started; started=$(now)
    hcitool -i hci5 ledc "$handle" 8 >/dev/null 2>&1
    local deadline=$(( $(date +%s) + 30 ))
    while [[ $(count_matches "$AGENT_LOG" 'closed: link lost') -le $before && $(date +%s) -le $deadline ]]; do sleep 0.1; done
    local seen_ms; seen_ms=$(ms_since "$started")
    wait "$hold_pid" 2>/dev/null
    if [[ $(count_matches "$AGENT_LOG" 'closed: link lost') -le $before ]]; then
        fail link-loss "the agent did not log the lost link: $(tail -n 3 "$AGENT_LOG" | tr '\n' ' ')"; return
    fi
    # The phone's own disconnect line: its address, the link, the reason. Earlier phone visits
    # ended by the phone (their process exited) are logged the same way, as peer closed.
    if [[ $(count_matches "$AGENT_LOG" "$PHONE_LINE: link lost") -le $lost_before ]]; then
        fail link-loss "no disconnect line with the phone's address: $(tail -n 3 "$AGENT_LOG" | tr '\n' ' ')"; return
    fi
    local left; left=$(count_matches "$AGENT_LOG" "$PHONE_LINE: peer closed")
    [[ $left -ge 1 ]] || { fail link-loss "no phone that hung up was logged (peer closed)"; return; }
    pass link-loss "console links: ${rssi}; agent logged 'link lost' ${seen_ms} ms after the disconnect; ${left} phone hang-ups logged"
}

# hold_until_car_ends NAME ADAPTER ARGS...: att-hold.py from hciADAPTER in the background, its
# output in RESULTS/NAME.out; sets hold_pid. Fails (returns 1) without an ATT link.
hold_until_car_ends() {
    local name=$1 adapter=$2; shift 2
    python3 "$HERE/att-hold.py" --adapter "$adapter" --car "$car_address" --type "$car_address_type" "$@" \
        >"$LANE_RESULTS/$name.out" 2>&1 &
    hold_pid=$!
    if ! wait_for 45 "$LANE_RESULTS/$name.out" '^mtu '; then
        kill "$hold_pid" 2>/dev/null; wait "$hold_pid" 2>/dev/null
        return 1
    fi
}

# The car ends a link at once: a fragment that breaks the format (a continuation without START).
scenario_car_close() {
    [[ -n $car_address ]] || { fail car-close "no car address from an earlier scan"; return; }
    local before; before=$(count_matches "$AGENT_LOG" "$PHONE_LINE by the car")
    hold_until_car_ends car-close-hold 7 --hold 15 --break-framing \
        || { fail car-close "no ATT link: $(tr '\n' ' ' <"$LANE_RESULTS/car-close-hold.out")"; return; }
    wait "$hold_pid" 2>/dev/null
    local ended; ended=$(grep '^ended: ' "$LANE_RESULTS/car-close-hold.out")
    local after; after=$(awk '{ print $4 }' <<<"$ended")
    [[ -n $after ]] || { fail car-close "the phone's link did not end: $(tr '\n' ' ' <"$LANE_RESULTS/car-close-hold.out")"; return; }
    local deadline=$(( $(date +%s) + 10 ))
    while [[ $(count_matches "$AGENT_LOG" "$PHONE_LINE by the car") -le $before && $(date +%s) -le $deadline ]]; do sleep 0.1; done
    [[ $(count_matches "$AGENT_LOG" "$PHONE_LINE by the car") -gt $before ]] \
        || { fail car-close "the agent did not log the disconnect: $(tail -n 3 "$AGENT_LOG" | tr '\n' ' ')"; return; }
    timing "car ends a link (broken fragment): the phone saw its link end ${after} ms after writing the fragment ($(awk '{ print $2 }' <<<"$ended"))"
    (( after <= PROMPT_MS )) || { fail car-close "the phone saw the end only after ${after} ms (limit ${PROMPT_MS})"; return; }
    pass car-close "phone saw the disconnect ${after} ms after the broken fragment; agent logged it"
}

# The car ends a link that never starts a handshake, at its deadline.
scenario_handshake_deadline() {
    [[ -n $car_address ]] || { fail handshake-deadline "no car address from an earlier scan"; return; }
    local before; before=$(count_matches "$AGENT_LOG" 'closed: no session within')
    local logged_before; logged_before=$(count_matches "$AGENT_LOG" "$PHONE_LINE by the car")
    hold_until_car_ends deadline-hold 8 --hold $(( DEADLINE_S + 20 )) \
        || { fail handshake-deadline "no ATT link: $(tr '\n' ' ' <"$LANE_RESULTS/deadline-hold.out")"; return; }
    local deadline=$(( $(date +%s) + DEADLINE_S + 15 ))
    while [[ $(count_matches "$AGENT_LOG" 'closed: no session within') -le $before && $(date +%s) -le $deadline ]]; do sleep 0.1; done
    wait "$hold_pid" 2>/dev/null
    [[ $(count_matches "$AGENT_LOG" 'closed: no session within') -gt $before ]] \
        || { fail handshake-deadline "the agent did not close the link: $(tail -n 3 "$AGENT_LOG" | tr '\n' ' ')"; return; }
    local closed_at; closed_at=$(grep 'closed: no session within' "$AGENT_LOG" | tail -1 | awk '{ print $1 }')
    local ended; ended=$(grep '^ended: ' "$LANE_RESULTS/deadline-hold.out")
    local end_epoch; end_epoch=$(awk '{ print $6 }' <<<"$ended")
    [[ -n $end_epoch ]] || { fail handshake-deadline "the phone's link did not end: $(tr '\n' ' ' <"$LANE_RESULTS/deadline-hold.out")"; return; }
    # From the agent's line (stamped as it was written) to the phone seeing the end.
    local lag; lag=$(awk -v a="$end_epoch" -v b="$closed_at" 'BEGIN { printf "%.0f", (a - b) * 1000 }')
    local deadline2=$(( $(date +%s) + 10 ))
    while [[ $(count_matches "$AGENT_LOG" "$PHONE_LINE by the car") -le $logged_before && $(date +%s) -le $deadline2 ]]; do sleep 0.1; done
    [[ $(count_matches "$AGENT_LOG" "$PHONE_LINE by the car") -gt $logged_before ]] \
        || { fail handshake-deadline "the agent did not log the disconnect: $(tail -n 3 "$AGENT_LOG" | tr '\n' ' ')"; return; }
    timing "car ends a link (handshake deadline ${DEADLINE_S} s): the phone saw its link end ${lag} ms after the agent logged the close ($(awk '{ print $2 }' <<<"$ended"), $(awk '{ print $4 }' <<<"$ended") ms after its MTU answer)"
    (( lag <= PROMPT_MS )) || { fail handshake-deadline "the phone saw the end ${lag} ms after the car closed the link (limit ${PROMPT_MS})"; return; }
    pass handshake-deadline "phone saw the disconnect ${lag} ms after the car closed the link; agent logged it"
}

scenario_power_cycle() {
    local before; before=$(count_matches "$AGENT_LOG" 'advertising on hci0')
    btmgmt --index 0 power off >/dev/null 2>&1
    local instances; instances=$(advertising_instances 0)
    [[ ${instances:-0} == 0 ]] || { fail power-cycle "still ${instances} instances while powered off"; return; }
    local started; started=$(now)
    btmgmt --index 0 power on >/dev/null 2>&1
    local deadline=$(( $(date +%s) + 30 ))
    while [[ $(count_matches "$AGENT_LOG" 'advertising on hci0') -le $before && $(date +%s) -le $deadline ]]; do sleep 0.1; done
    local readd_ms; readd_ms=$(ms_since "$started")
    [[ $(advertising_instances 0) == 1 ]] || { fail power-cycle "advertising not re-added: $(tail -n 3 "$AGENT_LOG" | tr '\n' ' ')"; return; }
    phone after-power-cycle hci6 --key "$PHONES/owner.pem" status
    if [[ $rc -ne 0 || ${out%%$'\n'*} != ok ]]; then fail power-cycle "status after power-on: exit $rc: $out $err"; return; fi
    # status moves no actuator: its round trip is the link's own (write, car, notification).
    timing "status (no actuator): handshake $(grep -Eo '^handshake ms: [0-9.]+' <<<"$out" | awk '{ print $3 }') ms, round trip $(grep -Eo '^command ms: [0-9.]+' <<<"$out" | awk '{ print $3 }') ms"
    pass power-cycle "advertising re-added ${readd_ms} ms after power-on; a new phone got a session"
}

scenario_stop() {
    kill -TERM "$agent_pid"
    local deadline=$(( $(date +%s) + 15 )) status
    while kill -0 "$agent_pid" 2>/dev/null && [[ $(date +%s) -le $deadline ]]; do sleep 0.1; done
    if kill -0 "$agent_pid" 2>/dev/null; then kill -KILL "$agent_pid"; fail stop "still running 15 s after SIGTERM"; return; fi
    wait "$agent_pid"; status=$?
    [[ $status -eq 0 ]] || { fail stop "exit status $status"; return; }
    local instances; instances=$(advertising_instances 0)
    [[ ${instances:-0} == 0 ]] || { fail stop "the stopped agent left ${instances} advertising instance(s) behind"; return; }
    pass stop "exit 0, advertising removed"
}

scenario_bluetoothd_refused() {
    mkdir -p /run/dbus
    dbus-daemon --system --fork --nopidfile >/dev/null 2>&1
    /usr/libexec/bluetooth/bluetoothd -n >"$LANE_RESULTS/bluetoothd.log" 2>&1 &
    local bluetoothd_pid=$!
    local deadline=$(( $(date +%s) + 10 ))
    until grep -qx bluetoothd /proc/"$bluetoothd_pid"/comm 2>/dev/null || [[ $(date +%s) -gt $deadline ]]; do sleep 0.1; done
    grep -qx bluetoothd /proc/"$bluetoothd_pid"/comm 2>/dev/null || { fail bluetoothd "bluetoothd did not start: $(cat "$LANE_RESULTS/bluetoothd.log")"; return; }
    run_logged bluetoothd-agent timeout 30 carkey-agent run --ble 0 --simulate --state-dir "$STATE" \
        --vehicle "$VEHICLE" --clock-sync yes --console none
    kill "$bluetoothd_pid" 2>/dev/null; wait "$bluetoothd_pid" 2>/dev/null
    if [[ $rc -eq 0 || $rc -eq 124 ]]; then fail bluetoothd "the agent ran next to bluetoothd (exit $rc)"; return; fi
    grep -q 'systemctl disable --now bluetooth' <<<"$out$err" || { fail bluetoothd "message without the fix: $out $err"; return; }
    pass bluetoothd "refused to start (exit $rc) with the fix named"
}

run_scenarios() {
    scenario_agent_start
    scenario_enroll_by_uuid
    scenario_unlock_by_identifier
    scenario_lock
    scenario_share_refused_trunk
    scenario_link_loss
    scenario_car_close
    scenario_handshake_deadline
    scenario_power_cycle
    scenario_stop
    scenario_bluetoothd_refused
}

#!/usr/bin/env bash
# Pulls the fleet test's figures out of a test log (make fleet: CARKEY_FLEET=1 swift test
# --filter FleetTests): the `fleet:` summary, the `fleet-json:` object, and any `fleet-lost:`
# lines explaining an event that never reached the back end.
#
#   scripts/fleet-report.sh LOG            the lines as they are
#   scripts/fleet-report.sh --json LOG     only the JSON object (for docs or jq)
set -euo pipefail

json=0
if [[ "${1:-}" == "--json" ]]; then json=1; shift; fi
log="${1:?usage: scripts/fleet-report.sh [--json] LOG}"
[[ -r "$log" ]] || { echo "fleet-report: cannot read $log" >&2; exit 2; }

if [[ $json == 1 ]]; then
    grep -E '^fleet-json: ' "$log" | sed 's/^fleet-json: //'
else
    grep -E '^(fleet|fleet-json|fleet-lost|fleet-progress):' "$log" || { echo "fleet-report: no fleet lines in $log" >&2; exit 1; }
fi

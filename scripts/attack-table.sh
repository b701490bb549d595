#!/usr/bin/env bash
# Prints the attack suite's table from the JSON lines the Attack* tests appended to REPORT
# (Tests/Harness/AttackReport.swift): attack, tries, owner success, unauthorised actions,
# crashes. Exits 1 when a line reports an unauthorised action or a crash, 2 when the report
# is missing or empty (no attack test ran).
#   scripts/attack-table.sh build/attack-report.jsonl
set -euo pipefail
report=${1:?usage: attack-table.sh REPORT.jsonl}
if [[ ! -s $report ]]; then
    echo "attack-table: no results in $report (did any Attack* test run?)" >&2
    exit 2
fi
exec python3 - "$report" <<'PY'
import json, sys
rows = []
for number, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    line = line.strip()
    if not line:
        continue
    try:
        rows.append(json.loads(line))
    except ValueError:
        print(f"attack-table: line {number} is not JSON: {line[:80]}", file=sys.stderr)
        sys.exit(2)
def owner(row):
    attempts = row["owner_attempts"]
    if not attempts:
        return "-"
    return f'{row["owner_successes"]}/{attempts} ({100.0 * row["owner_successes"] / attempts:.1f} %)'
header = ("attack", "tries", "owner ok <= 1 s", "unauthorised", "crashes", "note")
table = [header] + [(r["attack"], str(r["tries"]), owner(r), str(r["unauthorised"]), str(r["crashes"]), r["note"]) for r in rows]
widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
for index, row in enumerate(table):
    cells = [row[i].ljust(widths[i]) if i == 0 else row[i].rjust(widths[i]) for i in range(len(widths))]
    print("  ".join(cells) + "  " + row[-1])
    if index == 0:
        print("  ".join("-" * w for w in widths) + "  " + "-" * 4)
bad = [r["attack"] for r in rows if r["unauthorised"] or r["crashes"]]
attempts = sum(r["owner_attempts"] for r in rows)
successes = sum(r["owner_successes"] for r in rows)
unauthorised = sum(r["unauthorised"] for r in rows)
crashes = sum(r["crashes"] for r in rows)
print(f"attack: {len(rows)} attacks, {sum(r['tries'] for r in rows)} tries, owner {successes}/{attempts} ok within 1 s, "
      f"{unauthorised} unauthorised actions, {crashes} crashes")
if bad:
    print("attack: FAILED: " + ", ".join(bad), file=sys.stderr)
    sys.exit(1)
PY

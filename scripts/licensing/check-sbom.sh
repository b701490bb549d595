#!/usr/bin/env bash
# Checks an SBOM that scripts/licensing/sbom.py wrote: valid SPDX 2.3 for pyspdxtools (spdx-tools
# from PyPI, installed by `make deps`), and complete in what the release promises and SPDX leaves
# optional: every package has a version, a licence, a supplier and a SHA-256.
# Usage: scripts/licensing/check-sbom.sh FILE.spdx.json; exit 1 on a finding, 2 when it cannot run.
set -euo pipefail
sbom=${1:?usage: $0 FILE.spdx.json}
venv=${OPENCARKEY_SPDX_VENV:-/var/cache/opencarkey-spdx}
[[ -x $venv/bin/pyspdxtools ]] || { echo "check-sbom: no $venv/bin/pyspdxtools (make deps)" >&2; exit 2; }
status=0
"$venv/bin/pyspdxtools" --infile "$sbom" --version SPDX-2.3 || status=1
python3 - "$sbom" <<'PY' || status=1
import json, sys
document = json.load(open(sys.argv[1]))
problems = []
if document.get("spdxVersion") != "SPDX-2.3":
    problems.append(f"spdxVersion is {document.get('spdxVersion')!r}")
for package in document.get("packages", []):
    name = package.get("name", package.get("SPDXID"))
    for field in ("versionInfo", "supplier", "licenseDeclared"):
        if package.get(field) in (None, "", "NOASSERTION", "NONE"):
            problems.append(f"{name}: no {field}")
    if not any(c.get("algorithm") == "SHA256" and len(c.get("checksumValue", "")) == 64 for c in package.get("checksums", [])):
        problems.append(f"{name}: no SHA-256 checksum")
for problem in problems:
    print(f"check-sbom: {sys.argv[1]}: {problem}", file=sys.stderr)
if not problems:
    print(f"check-sbom: {sys.argv[1]}: SPDX 2.3, {len(document['packages'])} packages with version, licence, supplier, SHA-256")
sys.exit(1 if problems else 0)
PY
exit $status

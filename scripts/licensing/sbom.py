#!/usr/bin/env python3
"""An SPDX 2.3 SBOM (JSON) for a release artifact (a tarball or a .deb) holding static binaries.

Usage: sbom.py --artifact FILE --version V --out FILE.spdx.json \\
               --binary NAME=BINARY:MAP [--binary ...]

The document describes the artifact (its SHA-256), which CONTAINS each binary (its SHA-256,
Apache-2.0), and each binary has a STATIC_LINK relationship to every third-party file its link
map shows it loaded code from: one SPDX package per archive or object, with the component's
version, licence, supplier, a SHA-256 of that file and, for Debian's, a purl. Which files and
licences comes from linked.py, as for the notices. Reproducible: the creation time is
SOURCE_DATE_EPOCH (default: now) and the namespace is derived from the artifact's hash.
"""
import argparse
import datetime
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linked  # noqa: E402

PROJECT_SUPPLIER = "Organization: OpenCarKey Gateway authors"
NAMESPACE = "https://opencarkey.invalid/spdx"


sha256 = linked.sha256_of


def spdx_id(*parts):
    return "SPDXRef-" + re.sub(r"[^A-Za-z0-9.-]+", "-", "-".join(parts)).strip("-")


def package(identifier, name, version, supplier, licence, checksum, purpose, comment=None, purl=None):
    entry = {
        "SPDXID": identifier,
        "name": name,
        "versionInfo": version,
        "supplier": supplier,
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "checksums": [{"algorithm": "SHA256", "checksumValue": checksum}],
        "licenseConcluded": licence,
        "licenseDeclared": licence,
        "copyrightText": "NOASSERTION",
        "primaryPackagePurpose": purpose,
    }
    if comment:
        entry["comment"] = comment
    if purl:
        entry["externalRefs"] = [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                                  "referenceLocator": purl}]
    return entry


def build(artifact, version, binaries):
    artifact_sum = sha256(artifact)
    artifact_name = os.path.basename(artifact)
    artifact_id = spdx_id("Artifact", artifact_name)
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", datetime.datetime.now().timestamp()))
    created = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    packages, relationships, seen = [], [], {}
    relationships.append({"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                          "relatedSpdxElement": artifact_id})
    for name, binary, link_map in binaries:
        components = linked.components([link_map])
        terms = ["Apache-2.0"]
        for component in components:
            term = f"({component['licence']})" if " " in component["licence"] else component["licence"]
            if term not in terms:
                terms.append(term)
        expression = " AND ".join(terms)
        binary_id = spdx_id("Binary", name)
        packages.append(package(binary_id, name, version, PROJECT_SUPPLIER, "Apache-2.0", sha256(binary),
                                "APPLICATION", comment="statically linked; the project's code is Apache-2.0, "
                                "the whole binary " + expression))
        packages[-1]["licenseConcluded"] = expression
        relationships.append({"spdxElementId": artifact_id, "relationshipType": "CONTAINS",
                              "relatedSpdxElement": binary_id})
        for component in components:
            for path in component["files"]:
                file_id = spdx_id("Linked", os.path.basename(path), sha256(path)[:12])
                if file_id not in seen:
                    origin = component.get("file_packages", {}).get(path)
                    purl = None
                    if origin:
                        purl = f"pkg:deb/debian/{origin[0]}@{origin[1]}?arch={component['architecture']}"
                    seen[file_id] = package(file_id, f"{component['name']}: {os.path.basename(path)}",
                                            component["version"], component["supplier"], component["licence"],
                                            sha256(path), "LIBRARY", comment=f"{path}, from {component['origin']}",
                                            purl=purl)
                    packages.append(seen[file_id])
                relationships.append({"spdxElementId": binary_id, "relationshipType": "STATIC_LINK",
                                      "relatedSpdxElement": file_id})
    artifact_entry = package(artifact_id, artifact_name, version, PROJECT_SUPPLIER, "Apache-2.0", artifact_sum,
                             "ARCHIVE" if artifact_name.endswith(".tar.gz") else "INSTALL")
    artifact_entry["licenseConcluded"] = "NOASSERTION"
    return {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": artifact_name,
        "documentNamespace": f"{NAMESPACE}/{artifact_name}-{artifact_sum}",
        "creationInfo": {"created": created, "creators": ["Tool: opencarkey-sbom.py", PROJECT_SUPPLIER]},
        "packages": [artifact_entry] + packages,
        "relationships": relationships,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--artifact", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--binary", action="append", required=True, help="NAME=BINARY:MAP")
    args = parser.parse_args()
    binaries = []
    for spec in args.binary:
        name, _, rest = spec.partition("=")
        binary, _, link_map = rest.partition(":")
        for path in (binary, link_map):
            if not os.path.isfile(path):
                sys.exit(f"sbom: {spec}: no file {path}")
        binaries.append((name, binary, link_map))
    document = build(args.artifact, args.version, binaries)
    with open(args.out, "w") as handle:
        json.dump(document, handle, indent=1, sort_keys=True)
        handle.write("\n")
    print(f"sbom: {args.out}: {len(document['packages'])} packages")


if __name__ == "__main__":
    main()

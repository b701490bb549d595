#!/usr/bin/env python3
"""THIRD-PARTY-NOTICES.txt for statically linked binaries, from their linker maps.

Usage: notices.py --title TEXT --out FILE MAP...

Lists each third-party component the maps show code from (linked.py decides which), with its
version, origin, licence and the files linked in, then each component's licence text: the
Debian copyright file of its package, or the Swift toolchain's licence. Debian's copyright
files point at /usr/share/common-licenses for the long licence texts; a release also goes to
systems without that folder (a Yocto image), so each text referred to is appended once.
Refuses to write anything when a map shows a GPL-only archive.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linked  # noqa: E402

RULE = "=" * 78


def read(path):
    with open(path, errors="replace") as handle:
        return handle.read().rstrip("\n") + "\n"


def render(title, components):
    out = [title, "", "The programs are statically linked: besides the project's own code (Apache-2.0,",
           "see LICENSE) they contain code from the libraries below, as their link maps show.", ""]
    for component in components:
        out.append(f"  {component['name']} {component['version']}: {component['licence']}")
    common = []
    for component in components:
        text = read(component["licence_file"])
        out += ["", RULE, f"{component['name']} {component['version']}", RULE,
                f"Licence (SPDX): {component['licence']}",
                f"From: {component['origin']}",
                "Linked in: " + ", ".join(sorted({os.path.basename(f) for f in component["files"]})),
                f"Licence text ({component['licence_file']}):", "", text.rstrip("\n")]
        for name in re.findall(r"/usr/share/common-licenses/([A-Za-z0-9.+_-]+[A-Za-z0-9+])", text):
            if name not in common:
                common.append(name)
    appended = set()
    for name in common:
        path = f"/usr/share/common-licenses/{name}"
        # GPL is GPL-3 under another name, LGPL LGPL-3: one copy of each text.
        if os.path.isfile(path) and os.path.realpath(path) not in appended:
            appended.add(os.path.realpath(path))
            out += ["", RULE, f"/usr/share/common-licenses/{name} (referred to above)", RULE, "", read(path).rstrip("\n")]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--title", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("maps", nargs="+")
    args = parser.parse_args()
    for map_path in args.maps:
        if not os.path.isfile(map_path):
            sys.exit(f"notices: no link map {map_path}")
    hits = linked.gpl_only(args.maps)
    if hits:
        for map_path, archive, member in hits:
            print(f"notices: {map_path}: {archive}({member}) is GPL-only code in the binary", file=sys.stderr)
        sys.exit(1)
    components = linked.components(args.maps)
    missing = [c["licence_file"] for c in components if not os.path.isfile(c["licence_file"])]
    if missing:
        sys.exit("notices: no licence text at " + ", ".join(missing))
    with open(args.out, "w") as handle:
        handle.write(render(args.title, components))
    print(f"notices: {args.out}: {len(components)} components")


if __name__ == "__main__":
    main()

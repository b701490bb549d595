#!/usr/bin/env python3
"""Indexes downloaded .deb files: which package ships each static archive, object and licence.

Usage: index-debs.py OUT.tsv DOCS_DIR DEB...

The cross build unpacks packages with `dpkg-deb -x`, which leaves no dpkg database, so the
third-party notices and SBOMs (scripts/licensing/linked.py) read this index instead. OUT.tsv
holds one line per package (empty path and digest) and one per regular file ending in .a or
.o: path, SHA-256, package, version, source, source version, architecture, tab-separated. Each
package's /usr/share/doc/PACKAGE/copyright (or the symlink Debian ships in its place) is
copied under DOCS_DIR, so the licence texts stay when the unpacked tree is pruned. One pass
over each package's data: nothing else is unpacked.
"""
import hashlib
import os
import re
import subprocess
import sys
import tarfile

ARCHIVE_OR_OBJECT = re.compile(r"\.(a|o)$")
DOC = re.compile(r"^/usr/share/doc/[^/]+(/copyright)?$")


def control(deb):
    text = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Version", "Architecture", "Source"],
                          check=True, capture_output=True, text=True).stdout
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    package, version = fields["Package"], fields["Version"]
    source, source_version = fields.get("Source", package), version
    # "Source: gcc-14 (14.2.0-19)" when the source's version differs from the binary's.
    match = re.fullmatch(r"(\S+)\s+\((.+)\)", source)
    if match:
        source, source_version = match.group(1), match.group(2)
    return package, version, source, source_version, fields["Architecture"]


def index(deb, docs, lines):
    fields = control(deb)
    tail = "\t".join(fields)
    lines.append(f"\t\t{tail}")
    data = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    with tarfile.open(fileobj=data.stdout, mode="r|") as archive:
        for member in archive:
            path = "/" + member.name.lstrip("./")
            if member.isfile() and ARCHIVE_OR_OBJECT.search(path):
                digest = hashlib.sha256(archive.extractfile(member).read()).hexdigest()
                lines.append(f"{path}\t{digest}\t{tail}")
            elif DOC.match(path) and (member.isfile() or member.issym()):
                target = docs + path
                os.makedirs(os.path.dirname(target), exist_ok=True)
                if os.path.lexists(target):
                    os.remove(target)
                if member.issym():
                    os.symlink(member.linkname, target)
                elif path.endswith("/copyright"):
                    with open(target, "wb") as out:
                        out.write(archive.extractfile(member).read())
    if data.wait() != 0:
        sys.exit(f"index-debs: dpkg-deb --fsys-tarfile {deb} failed")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, docs, debs = argv[0], argv[1], argv[2:]
    lines = []
    for deb in sorted(debs):
        index(deb, docs, lines)
    with open(out + ".tmp", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(out + ".tmp", out)
    print(f"index-debs: {out}: {len(debs)} packages, {sum(1 for l in lines if not l.startswith(chr(9)))} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

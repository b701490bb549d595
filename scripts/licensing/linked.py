#!/usr/bin/env python3
"""What a static link put into a binary, read from its linker map, and under which licence.

Reads GNU-format (gold, ld) and lld maps: every archive member `/path/libX.a(member.o)` and every
object `/path/x.o` named in the map is an input the linker loaded. Each input is either one of
the project's own objects (under the SwiftPM scratch path) or a third-party library, which is
resolved to its Debian package (version, source package, copyright file) or to the Swift
toolchain it came from. Packages are asked of this machine's dpkg, except for a cross build's
maps: when a `link-roots.tsv` lies beside the first map (scripts/aarch64/build.sh writes one),
paths under each prefix it lists are looked up in that tree's package index
(scripts/aarch64/index-debs.py), and each archive's SHA-256 must match the index. An input nobody can account for is an error: a new library must
be added to the table below before it ships.

Usage:
  linked.py components MAP...       one JSON object per third-party component on stdout
  linked.py check-gpl MAP...        exit 1 naming each GPL-only archive a map loaded members from
"""
import hashlib
import json
import os
import re
import subprocess
import sys

# Archives whose licence is the GPL without a linking exception: nothing of them may be linked
# into a binary the project ships under Apache-2.0. Headers alone (libbluetooth's, for the HCI
# and mgmt structures) are fine; a member in the map is not.
GPL_ONLY = {
    "libbluetooth.a": "BlueZ library, GPL-2.0-or-later",
    "libreadline.a": "GNU Readline, GPL-3.0-or-later",
    "libhistory.a": "GNU Readline history, GPL-3.0-or-later",
    "libpci.a": "pciutils library, GPL-2.0-or-later",
    "libgdbm.a": "GNU dbm, GPL-3.0-or-later",
    "libiw.a": "wireless-tools library, GPL-2.0-only",
}

# Debian source package -> the name shown and the SPDX licence of what the project links from it.
# The licence is the one covering the library code linked in, not every file of the source.
DEBIAN_SOURCES = {
    "openssl": ("OpenSSL", "Apache-2.0"),
    "sqlite3": ("SQLite", "blessing"),
    "libgpiod": ("libgpiod", "LGPL-2.1-or-later"),
    "glibc": ("GNU C Library", "LGPL-2.1-or-later"),
    "gcc-12": ("GCC runtime libraries", "GPL-3.0-or-later WITH GCC-exception-3.1"),
    "gcc-14": ("GCC runtime libraries", "GPL-3.0-or-later WITH GCC-exception-3.1"),
    "swiftlang": ("Swift runtime and standard library", "Apache-2.0 WITH Swift-exception"),
    "mosquitto": ("Eclipse Mosquitto client library", "EPL-2.0 OR BSD-3-Clause"),
    "zlib": ("zlib", "Zlib"),
    "bluez": ("BlueZ library", "GPL-2.0-or-later"),
}

# Archives built here from a Debian source package rather than installed from a binary one:
# file name -> the binary package of the same source and version.
BUILT_FROM_DEBIAN_SOURCE = {"libmosquitto.a": "libmosquitto-dev"}

DEBIAN_SUPPLIER = "Organization: Debian (https://www.debian.org)"
SWIFT_SUPPLIER = "Organization: Swift project (https://swift.org)"

ARCHIVE_MEMBER = re.compile(r"(/[^\s()]+\.a)\(([^()\s]+)\)")
OBJECT = re.compile(r"(?<![\w(/.-])(/[^\s()]+\.o)(?![\w(])")


def inputs(map_path):
    """(path, member or None) for every input the map names, in first-seen order."""
    seen = {}
    with open(map_path, errors="replace") as handle:
        for line in handle:
            for archive, member in ARCHIVE_MEMBER.findall(line):
                seen.setdefault((archive, member), None)
            for obj in OBJECT.findall(line):
                seen.setdefault((obj, None), None)
    return list(seen)


def is_project_object(path):
    # SwiftPM puts each module's objects in SCRATCH/<triple>/<config>/<Module>.build/.
    return path.endswith(".o") and re.search(r"/[^/]+\.build/[^/]+\.o$", path) is not None


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LinkRoot:
    """A tree a cross link read from: its prefix in the maps, where it is here, and its index."""

    def __init__(self, prefix, host, index, docs):
        self.prefix, self.host, self.docs = prefix.rstrip("/"), host.rstrip("/"), docs.rstrip("/")
        self.files, self.packages = {}, {}
        with open(index) as handle:
            for line in handle:
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 7:
                    continue
                path, digest, package, version, source, source_version, arch = fields
                if path:
                    self.files[path] = (package, digest)
                else:
                    self.packages[package] = (version, source, source_version, arch)
        self.index = index

    def contains(self, path):
        return path.startswith(self.prefix + "/")

    def here(self, path):
        return self.host + path[len(self.prefix):]

    def owner(self, path):
        """The package that shipped path (a map path under the prefix), checked by digest."""
        local = path[len(self.prefix):]
        real = os.path.realpath(self.here(path))
        host_real = os.path.realpath(self.host)
        candidates = [local, "/usr" + local]
        if real.startswith(host_real + "/"):
            candidates.append(real[len(host_real):])
        for candidate in candidates:
            if candidate in self.files:
                package, digest = self.files[candidate]
                if sha256_of(self.here(path)) != digest:
                    raise SystemExit(f"linked: {self.here(path)} is not the {candidate} of {package} that {self.index} "
                                     "describes (the index is of other versions: remove the cache's stamps/arm64-* and "
                                     "stamps/sdk-*, and run make static-aarch64 again)")
                return package
        return None


def read_link_roots(map_paths):
    """The LinkRoots of link-roots.tsv beside the first map, or [] for a native link."""
    listing = os.path.join(os.path.dirname(os.path.abspath(map_paths[0])), "link-roots.tsv")
    if not os.path.isfile(listing):
        return []
    roots = []
    with open(listing) as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 4:
                if not os.path.isfile(fields[2]):
                    raise SystemExit(f"linked: {listing} names the package index {fields[2]}, which is missing "
                                     "(make static-aarch64 makes it)")
                roots.append(LinkRoot(*fields))
    return roots


class Resolver:
    """Package facts for an input path: from a LinkRoot's index, or this machine's dpkg."""

    def __init__(self, roots=()):
        self.roots = list(roots)
        self.owners = {}
        self.packages = {}

    def root_of(self, path):
        return next((root for root in self.roots if root.contains(path)), None)

    def here(self, path):
        """Where an input of the maps is on this machine."""
        root = self.root_of(path)
        return root.here(path) if root else path

    def _dpkg(self, *args):
        return subprocess.run(["dpkg-query", *args], capture_output=True, text=True)

    def owner(self, path):
        """The Debian binary package that installed (or, cross, shipped) path, or None."""
        if path in self.owners:
            return self.owners[path]
        root = self.root_of(path)
        found = None
        if root:
            found = root.owner(path)
        else:
            real = os.path.realpath(path)
            for candidate in [path, real, "/usr" + path if not path.startswith("/usr/") else path]:
                result = self._dpkg("-S", candidate)
                if result.returncode == 0:
                    found = result.stdout.split(":")[0].strip()
                    break
        self.owners[path] = found
        return found

    def package(self, name, path):
        root = self.root_of(path)
        key = (root.index if root else None, name)
        if key not in self.packages:
            self.packages[key] = self._package(name, root)
        return self.packages[key]

    def _package(self, name, root):
        if root:
            if name not in root.packages:
                raise SystemExit(f"linked: the package index {root.index} knows no package {name}")
            return root.packages[name]
        fields = "${Version}\t${source:Package}\t${source:Version}\t${Architecture}"
        result = self._dpkg("-W", "-f=" + fields, name)
        if result.returncode != 0 or not result.stdout.strip():
            raise SystemExit(f"linked: dpkg-query knows no installed package {name}")
        version, source, source_version, arch = result.stdout.strip().split("\t")
        return version, source, source_version, arch

    def doc(self, package, path):
        root = self.root_of(path)
        return (root.docs if root else "") + f"/usr/share/doc/{package}/copyright"


def swift_toolchain(path):
    """The toolchain root for a file under <root>/usr/lib/swift_static/, or None."""
    marker = "/usr/lib/swift_static/"
    return path[: path.index(marker)] if marker in path else None


def swift_component(toolchain):
    swiftc = toolchain + "/usr/bin/swiftc"
    version = "unknown"
    if os.access(swiftc, os.X_OK):
        text = subprocess.run([swiftc, "--version"], capture_output=True, text=True).stdout
        match = re.search(r"Swift version (\S+)", text)
        version = match.group(1) if match else version
    return {
        "key": "swift:" + toolchain,
        "name": "Swift runtime and standard library",
        "version": version,
        "licence": "Apache-2.0 WITH Swift-exception",
        "supplier": SWIFT_SUPPLIER,
        "origin": f"the Swift {version} toolchain in {toolchain}",
        "licence_file": toolchain + "/usr/share/swift/LICENSE.txt",
        "files": [],
    }


def components(map_paths):
    """The third-party components the maps' links loaded code from, with the files of each
    (paths on this machine: a cross link's chroot paths translated)."""
    resolver = Resolver(read_link_roots(map_paths))
    found = {}
    unknown = []
    paths = []
    for map_path in map_paths:
        for path, _member in inputs(map_path):
            if path not in paths and not is_project_object(path):
                paths.append(path)
    for path in paths:
        base = os.path.basename(path)
        toolchain = swift_toolchain(path)
        if toolchain:
            component = found.setdefault("swift:" + toolchain, swift_component(toolchain))
        else:
            installed = resolver.owner(path)
            package = installed or BUILT_FROM_DEBIAN_SOURCE.get(base)
            if package is None:
                unknown.append(path)
                continue
            version, source, source_version, arch = resolver.package(package, path)
            if source not in DEBIAN_SOURCES:
                unknown.append(f"{path} (Debian source {source}: not in linked.py's table)")
                continue
            name, licence = DEBIAN_SOURCES[source]
            component = found.setdefault("debian:" + source, {
                "key": "debian:" + source,
                "name": name,
                "version": source_version,
                "licence": licence,
                "supplier": DEBIAN_SUPPLIER,
                "origin": "",
                "debian_source": source,
                "debian_packages": [],
                "architecture": arch,
                "licence_file": resolver.doc(package, path),
                "files": [],
            })
            built = "" if installed else f", built here from Debian's {source} {source_version} source"
            entry = f"{package} {version}{built}"
            if entry not in component["debian_packages"]:
                component["debian_packages"].append(entry)
            component["origin"] = f"Debian ({arch}): " + "; ".join(component["debian_packages"])
            component.setdefault("file_packages", {})[resolver.here(path)] = [package, version]
        component["files"].append(resolver.here(path))
    if unknown:
        raise SystemExit("linked: inputs no table accounts for:\n  " + "\n  ".join(sorted(set(unknown))))
    return sorted(found.values(), key=lambda c: c["name"].lower())


def gpl_only(map_paths):
    """(map, archive, member) for every member of a GPL-only archive the maps name."""
    hits = []
    for map_path in map_paths:
        for path, member in inputs(map_path):
            if member is not None and os.path.basename(path) in GPL_ONLY:
                hits.append((map_path, path, member))
    return hits


def main(argv):
    if len(argv) < 2 or argv[0] not in ("components", "check-gpl"):
        print(__doc__, file=sys.stderr)
        return 2
    command, maps = argv[0], argv[1:]
    for map_path in maps:
        if not os.path.isfile(map_path):
            print(f"linked: no link map {map_path}", file=sys.stderr)
            return 2
    if command == "components":
        for component in components(maps):
            print(json.dumps(component, sort_keys=True))
        return 0
    hits = gpl_only(maps)
    for map_path, archive, member in hits:
        print(f"linked: {map_path}: {archive}({member}) is linked in: "
              f"{GPL_ONLY[os.path.basename(archive)]}, not allowed in the binaries", file=sys.stderr)
    if not hits:
        print(f"linked: no GPL-only archive in {' '.join(maps)}")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

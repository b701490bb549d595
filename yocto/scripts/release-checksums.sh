#!/usr/bin/env bash
# Prints the SRC_URI checksum lines for carkey-agent-release.inc from release tarballs named
# carkey-agent-VERSION-ARCH.tar.gz (ARCH aarch64 or x86_64), after checking that each has the
# files the recipe installs.
# Usage: yocto/scripts/release-checksums.sh TARBALL...
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: $0 carkey-agent-VERSION-ARCH.tar.gz..." >&2; exit 2; }
for tarball in "$@"; do
    name=$(basename "$tarball" .tar.gz)
    [[ $name =~ ^carkey-agent-([0-9][0-9A-Za-z.+~-]*)-(aarch64|x86_64)$ ]] \
        || { echo "$tarball: not carkey-agent-VERSION-(aarch64|x86_64).tar.gz" >&2; exit 1; }
    version=${BASH_REMATCH[1]} arch=${BASH_REMATCH[2]}
    listing=$(tar -tzf "$tarball")
    # The paths the recipe's do_install reads, under the folder bitbake unpacks as ${S}.
    for path in bin/carkey-agent bin/carkey board/systemd/carkey-agent.service \
                board/systemd/carkey-agent.sysusers board/udev/60-opencarkey.rules \
                board/agent.example.json; do
        grep -qx "\(\./\)\?carkey-agent-$version/$path" <<<"$listing" \
            || { echo "$tarball: carkey-agent-$version/$path missing" >&2; exit 1; }
    done
    echo "SRC_URI[$arch.sha256sum] = \"$(sha256sum "$tarball" | cut -d' ' -f1)\""
done

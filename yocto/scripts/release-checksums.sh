#!/usr/bin/env bash
# Prints the SRC_URI checksum lines for carkey-agent-release.inc from release tarballs named
# carkey-agent-VERSION-ARCH.tar.gz (ARCH aarch64 or x86_64), after checking that each has the
# files the recipe installs and the third-party notices, and that its LICENSE has the md5 the
# recipe's LIC_FILES_CHKSUM names (bitbake would stop at do_populate_lic otherwise).
# Usage: yocto/scripts/release-checksums.sh TARBALL...
set -euo pipefail
recipe=$(dirname "$0")/../meta-opencarkey/recipes-opencarkey/carkey-agent/carkey-agent_0.1.0.bb
licence_md5=$(sed -n 's|^LIC_FILES_CHKSUM = "file://LICENSE;md5=\([0-9a-f]*\)"|\1|p' "$recipe")
[[ -n $licence_md5 ]] || { echo "$recipe: no LIC_FILES_CHKSUM for file://LICENSE" >&2; exit 1; }
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
                board/agent.example.json LICENSE THIRD-PARTY-NOTICES.txt; do
        grep -qx "\(\./\)\?carkey-agent-$version/$path" <<<"$listing" \
            || { echo "$tarball: carkey-agent-$version/$path missing" >&2; exit 1; }
    done
    actual=$(tar -xOzf "$tarball" "carkey-agent-$version/LICENSE" | md5sum | cut -d' ' -f1)
    [[ $actual == "$licence_md5" ]] \
        || { echo "$tarball: LICENSE has md5 $actual, the recipe's LIC_FILES_CHKSUM says $licence_md5" >&2; exit 1; }
    echo "SRC_URI[$arch.sha256sum] = \"$(sha256sum "$tarball" | cut -d' ' -f1)\""
done

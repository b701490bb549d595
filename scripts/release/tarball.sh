#!/usr/bin/env bash
# `make release`: the release tarballs the Yocto recipe consumes (yocto/meta-opencarkey),
# one per architecture: build/release/carkey-agent-VERSION-ARCH.tar.gz with the top folder
# carkey-agent-VERSION/ holding bin/carkey-agent, bin/carkey (static, stripped),
# libexec/opencarkey/carkey-pkcs11-bridge (dynamically linked, docs/pkcs11-bridge.md), LICENSE,
# THIRD-PARTY-NOTICES.txt (scripts/licensing/notices.py, from the link maps beside the
# binaries) and board/ (board files, overlays, unit, sysusers, udev rules, example config).
# Beside each tarball: its SPDX 2.3 SBOM, carkey-agent-VERSION-ARCH.spdx.json
# (scripts/licensing/sbom.py), and the relink kit the LGPL libraries call for,
# carkey-agent-VERSION-ARCH-relink-kit.tar.gz (scripts/licensing/relink-kit.sh, from the
# objects of the SwiftPM scratch path `make static` built in, and for aarch64 those of the
# cross build's scratch path in its chroot). Reproducible: names sorted,
# owner 0, mtimes from the last commit, gzip without a timestamp. Then prints the SRC_URI
# checksum lines for carkey-agent-release.inc (yocto/scripts/release-checksums.sh, which also
# checks that every file the recipe installs is there).
#
# Usage: scripts/release/tarball.sh [--out DIR] [--x86_64 BINDIR] [--aarch64 BINDIR] [--objects SCRATCH]
#   defaults: --out build/release, --x86_64 build/static, --aarch64 build/aarch64,
#   --objects .build ("none": no relink kit, said in the output; without it a missing
#   scratch path is an error). BINDIR must hold carkey-agent.map and carkey.map too.
#   An architecture whose BINDIR lacks carkey-agent or carkey is skipped with a message.
#   The aarch64 kit comes from the chroot of OPENCARKEY_AARCH64_CACHE (default
#   /var/cache/opencarkey-aarch64) and its scratch path for GPIOD_API (default v1).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$root/build/release
declare -A bindir=([x86_64]=$root/build/static [aarch64]=$root/build/aarch64)
objects=$root/.build
cross_chroot=${OPENCARKEY_AARCH64_CACHE:-/var/cache/opencarkey-aarch64}/amd64
cross_objects=$cross_chroot/ock/scratch-gpiod-${GPIOD_API:-v1}
licensing=$root/scripts/licensing
while [[ $# -gt 0 ]]; do
    case $1 in
        --out) out=$2; shift 2 ;;
        --x86_64|--aarch64) bindir[${1#--}]=$2; shift 2 ;;
        --objects) objects=$2; shift 2 ;;
        *) echo "release: unknown argument $1" >&2; exit 2 ;;
    esac
done
version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' "$root/Sources/Protocol/BuildInfo.swift")
[[ -n $version ]] || { echo "release: no version in Sources/Protocol/BuildInfo.swift" >&2; exit 1; }
epoch=$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)
mkdir -p "$out"
made=()
for arch in x86_64 aarch64; do
    dir=${bindir[$arch]}
    if [[ ! -f $dir/carkey-agent || ! -f $dir/carkey ]]; then
        echo "release: $arch skipped: no carkey-agent and carkey in $dir"
        continue
    fi
    machine=$([[ $arch == x86_64 ]] && echo "x86-64" || echo "ARM aarch64")
    for binary in carkey-agent carkey; do
        description=$(file -b "$dir/$binary")
        [[ $description == *"$machine"* && $description == *"statically linked"* ]] \
            || { echo "release: $dir/$binary is not a static $arch executable: $description" >&2; exit 1; }
    done
    maps=("$dir/carkey-agent.map" "$dir/carkey.map")
    for map in "${maps[@]}"; do
        [[ -f $map ]] || { echo "release: no link map $map: the notices and the SBOM are made from it" >&2; exit 1; }
    done
    # The PKCS#11 vault's helper (docs/pkcs11-bridge.md): dynamically linked on purpose.
    [[ -f $dir/carkey-pkcs11-bridge ]] \
        || { echo "release: no $dir/carkey-pkcs11-bridge (make static / make static-aarch64 build it)" >&2; exit 1; }
    description=$(file -b "$dir/carkey-pkcs11-bridge")
    [[ $description == *"$machine"* && $description == *"dynamically linked"* ]] \
        || { echo "release: $dir/carkey-pkcs11-bridge is not a dynamically linked $arch executable: $description" >&2; exit 1; }
    stage=$(mktemp -d)
    top=$stage/carkey-agent-$version
    mkdir -p "$top/bin" "$top/libexec/opencarkey"
    install -m 0755 "$dir/carkey-agent" "$dir/carkey" "$top/bin/"
    install -m 0755 "$dir/carkey-pkcs11-bridge" "$top/libexec/opencarkey/"
    install -m 0644 "$root/LICENSE" "$top/LICENSE"
    "$licensing/notices.py" --title "carkey-agent $version ($arch): third-party notices" \
        --out "$top/THIRD-PARTY-NOTICES.txt" "${maps[@]}" >/dev/null \
        || { echo "release: no notices for $arch" >&2; rm -rf "$stage"; exit 1; }
    git -C "$root" ls-files -z board | (cd "$root" && xargs -0 cp --parents -t "$top")
    tarball=$out/carkey-agent-$version-$arch.tar.gz
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$stage" \
        -cf - "carkey-agent-$version" | gzip -n -9 > "$tarball"
    rm -rf "$stage"
    echo "release: $tarball ($(stat -c %s "$tarball") bytes)"
    SOURCE_DATE_EPOCH=$epoch "$licensing/sbom.py" --artifact "$tarball" --version "$version" \
        --out "${tarball%.tar.gz}.spdx.json" --binary "carkey-agent=$dir/carkey-agent:${maps[0]}" \
        --binary "carkey=$dir/carkey:${maps[1]}" | sed 's/^/release: /'
    kit=$out/carkey-agent-$version-$arch-relink-kit.tar.gz
    if [[ $objects != none && $arch == x86_64 ]]; then
        "$licensing/relink-kit.sh" --scratch "$objects" --binaries "$dir" --out "$kit" | sed 's/^/release: /'
    elif [[ $objects != none && $arch == aarch64 ]]; then
        "$licensing/relink-kit.sh" --chroot "$cross_chroot" --scratch "$cross_objects" --binaries "$dir" --out "$kit" \
            | sed 's/^/release: /'
    else
        echo "release: $arch: no relink kit"
    fi
    made+=("$tarball")
done
[[ ${#made[@]} -gt 0 ]] || { echo "release: no architecture had binaries (make static, make static-aarch64)" >&2; exit 1; }
"$root/yocto/scripts/release-checksums.sh" "${made[@]}"

#!/usr/bin/env bash
# `make deb`: carkey-agent_VERSION_ARCH.deb for amd64 and arm64 in build/deb.
#
# How: a staged file tree plus hand-written DEBIAN/ files (templates/), packed with
# `dpkg-deb --root-owner-group --build`. No debhelper: the binaries are already built (and
# cross-built), so there is no source package to drive, and every file, mode and maintainer
# script is in plain sight here. Needs dpkg-dev tools (dpkg-deb), file, and dtc
# (device-tree-compiler) for the compiled overlays.
#
# Usage: scripts/deb/build.sh [options]
#   --version V          package version (default: BuildInfo.version from the sources); a
#                        suffix after +, ~ or - is allowed (0.1.0+test1), the part before it
#                        must equal what `carkey-agent --version` prints
#   --out DIR            where the .deb files go (default build/deb)
#   --arch A             amd64 or arm64, repeatable (default: both)
#   --amd64-agent P, --amd64-carkey P, --arm64-agent P, --arm64-carkey P
#                        the binaries (default build/static/* and build/aarch64/*)
#   --board DIR          where the unit, sysusers, udev rules and configs come from (default
#                        board/; tests pass a fixture). Same layout: systemd/carkey-agent.service,
#                        systemd/carkey-agent.sysusers, udev/60-opencarkey.rules,
#                        agent.example.json, board description files *.json, overlays/*.dts,
#                        raspberrypi/config.txt and README.md.
# Each binary's link map (the binary's path + .map, as make static writes them) is needed too:
# /usr/share/doc/carkey-agent/THIRD-PARTY-NOTICES.txt and the package's SPDX 2.3 SBOM
# (carkey-agent_VERSION_ARCH.spdx.json beside the .deb) are made from them (scripts/licensing).
# An architecture whose binaries are missing is skipped with a message, or is an error when
# CARKEY_REQUIRE_ARTIFACTS=1. Nothing packaged at all is an error.
# Environment: CARKEY_DEB_MAINTAINER (the Maintainer field), SOURCE_DATE_EPOCH (default: the
# last commit's time; file times in the package and the changelog date come from it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
templates=$here/templates

version=
out=$root/build/deb
board=$root/board
archs=()
declare -A binary=(
    [amd64-agent]=$root/build/static/carkey-agent
    [amd64-carkey]=$root/build/static/carkey
    [arm64-agent]=$root/build/aarch64/carkey-agent
    [arm64-carkey]=$root/build/aarch64/carkey
)

die() { echo "deb: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
    case $1 in
    --version) version=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --arch) archs+=("${2:?}"); shift 2 ;;
    --board) board=${2:?}; shift 2 ;;
    --amd64-agent | --amd64-carkey | --arm64-agent | --arm64-carkey | --amd64-bridge | --arm64-bridge)
        binary[${1#--}]=${2:?}; shift 2 ;;
    *) die "unknown option $1 (see the header of $0)" ;;
    esac
done
[[ ${#archs[@]} -gt 0 ]] || archs=(amd64 arm64)

for tool in dpkg-deb file gzip dtc; do
    command -v "$tool" >/dev/null || die "$tool is missing (Debian packages dpkg-dev, file, gzip, device-tree-compiler)"
done

# The version: one source of truth, BuildInfo.swift.
upstream=$(sed -n 's/^ *public static let version = "\([^"]*\)".*/\1/p' "$root/Sources/Protocol/BuildInfo.swift")
[[ -n $upstream ]] || die "no version in Sources/Protocol/BuildInfo.swift"
version=${version:-$upstream}
[[ $version =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || die "not a Debian version: $version"
[[ ${version%%[+~-]*} == "$upstream" ]] ||
    die "version $version does not start with the sources' version $upstream"

maintainer=${CARKEY_DEB_MAINTAINER:-OpenCarKey Gateway maintainers <opencarkey@users.noreply.github.com>}
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}

# The board files the package installs; all are required (the real build takes board/'s).
unit=$board/systemd/carkey-agent.service
sysusers=$board/systemd/carkey-agent.sysusers
udev=$board/udev/60-opencarkey.rules
config=$board/agent.example.json
for f in "$unit" "$sysusers" "$udev" "$config"; do
    [[ -f $f ]] || die "missing $f"
done
grep -q '^User=carkey' "$unit" || die "$unit does not run the agent as User=carkey"
fallback=$("$here/sysusers-fallback.sh" "$sysusers") || die "cannot translate $sysusers"
grep -q "^add_user 'carkey' " <<<"$fallback" || die "$sysusers does not declare the user carkey"
# The subsystems the rules name, for the postinst's `udevadm trigger` (only those devices are
# re-evaluated when the package is installed on a running system).
subsystems=$(grep -v '^[[:space:]]*#' "$udev" | grep -o 'SUBSYSTEM=="[^"]*"' | sed 's/SUBSYSTEM=="\(.*\)"/\1/' |
    tr '|' '\n' | sort -u | sed 's/^/ --subsystem-match=/' | tr -d '\n')

# machine name in `file` output, qemu runner, per Debian architecture
declare -A machine=([amd64]="x86-64" [arm64]="ARM aarch64")
declare -A runner=([amd64]="" [arm64]="qemu-aarch64-static")

# Substitutes @NAME@ placeholders from the variables given as NAME=value pairs.
fill() { # TEMPLATE NAME=VALUE...
    local text
    text=$(<"$1")
    shift
    local pair
    for pair in "$@"; do
        text=${text//@${pair%%=*}@/${pair#*=}}
    done
    [[ $text != *@[A-Z_]*@* ]] || die "unfilled placeholder in $1"
    printf '%s\n' "$text"
}

check_binary() { # ARCH PATH NAME
    local description
    description=$(file -b "$2")
    [[ $description == *"ELF 64-bit"*"${machine[$1]}"* ]] || die "$2 is not an ${machine[$1]} ELF: $description"
    [[ $description == *"statically linked"* || $description == *"static-pie linked"* ]] ||
        die "$2 is not statically linked: $description"
    local run=${runner[$1]}
    if [[ -n $run ]] && ! command -v "$run" >/dev/null; then
        echo "deb: $1: $run missing, $3 --version not checked" >&2
        return
    fi
    local printed
    printed=$($run "$2" --version) || die "$2 --version failed"
    [[ $printed == "$3 $upstream" ]] || die "$2 --version printed \"$printed\", expected \"$3 $upstream\" (stale binary?)"
}

build_one() { # ARCH
    local arch=$1 agent=${binary[$1-agent]} carkey=${binary[$1-carkey]}
    # The PKCS#11 bridge (docs/pkcs11-bridge.md) is built beside the agent unless named.
    local bridge=${binary[$1-bridge]:-$(dirname "$agent")/carkey-pkcs11-bridge}
    check_binary "$arch" "$agent" carkey-agent
    check_binary "$arch" "$carkey" carkey
    local description
    [[ -f $bridge ]] || die "no $bridge (make static / make static-aarch64 build it)"
    description=$(file -b "$bridge")
    [[ $description == *"ELF 64-bit"*"${machine[$arch]}"*"dynamically linked"* ]] ||
        die "$bridge is not a dynamically linked ${machine[$arch]} ELF: $description"

    local stage
    stage=$(mktemp -d "${TMPDIR:-/tmp}/carkey-deb.XXXXXX")
    chmod 0755 "$stage" # mktemp makes it 0700, and the archive's ./ would carry that
    trap 'rm -rf "$stage"' RETURN
    umask 022
    local doc=$stage/usr/share/doc/carkey-agent
    install -D -m 0755 "$agent" "$stage/usr/bin/carkey-agent"
    install -D -m 0755 "$carkey" "$stage/usr/bin/carkey"
    install -D -m 0755 "$bridge" "$stage/usr/libexec/opencarkey/carkey-pkcs11-bridge"
    # bookworm's places: units and udev rules under /lib (the usr-merge move is not done for
    # bookworm packages; lintian checks rules in lib/udev/rules.d), sysusers under /usr/lib.
    install -D -m 0644 "$unit" "$stage/lib/systemd/system/carkey-agent.service"
    install -D -m 0644 "$udev" "$stage/lib/udev/rules.d/60-opencarkey.rules"
    install -D -m 0644 "$sysusers" "$stage/usr/lib/sysusers.d/carkey-agent.conf"
    local boardfile
    for boardfile in "$board"/*.json; do
        [[ $(basename "$boardfile") == agent.example.json ]] && continue
        install -D -m 0644 "$boardfile" "$stage/usr/share/opencarkey/boards/$(basename "$boardfile")"
    done
    # The device-tree overlays, compiled here as the tests compile them (dtc -@, no warning
    # allowed) and with their sources: a Pi image has no dtc, and copying the .dtbo into the
    # boot partition is all that is left to do on the car (board/README.md, "Boards"). A .dtbo
    # is the same on every architecture.
    local overlay name warnings
    for overlay in "$board"/overlays/*.dts; do
        [[ -f $overlay ]] || continue
        name=$(basename "$overlay" .dts)
        install -D -m 0644 "$overlay" "$stage/usr/share/opencarkey/overlays/$name.dts"
        warnings=$(dtc -@ -I dts -O dtb -o "$stage/usr/share/opencarkey/overlays/$name.dtbo" "$overlay" 2>&1) ||
            die "dtc failed on $overlay: $warnings"
        [[ -z $warnings ]] || die "dtc warns about $overlay: $warnings"
        chmod 0644 "$stage/usr/share/opencarkey/overlays/$name.dtbo"
    done
    # 0640 root:root in the archive; the postinst's dpkg-statoverride makes it root:carkey (the
    # group does not exist when the package is built). It may hold the service PIN once set.
    # Not board/agent.example.json: that one is for the simulated car on a workstation, with a
    # pty console and a service PIN everybody can read in this repository, which no car may
    # ship with. The packaged file has no PIN (service mode off) and no console.
    install -d -m 0755 "$stage/etc/opencarkey"
    install -m 0640 "$templates/agent.json" "$stage/etc/opencarkey/agent.json"
    if grep -q '"pin"' "$stage/etc/opencarkey/agent.json"; then die "the packaged agent.json must not carry a service PIN"; fi
    local named
    named=$(sed -n 's|.*"board": *"\(/usr/share/opencarkey/boards/[^"]*\)".*|\1|p' "$stage/etc/opencarkey/agent.json")
    [[ -z $named || -f $stage$named ]] || die "the config names the board file $named, which is not packaged"
    install -D -m 0644 "$config" "$doc/examples/agent.example.json"
    install -D -m 0644 "$templates/copyright" "$doc/copyright"
    local map
    for map in "$agent.map" "$carkey.map"; do
        [[ -f $map ]] || die "no link map $map beside the binary: the notices are made from it (make static)"
    done
    "$root/scripts/licensing/notices.py" --title "carkey-agent $version ($arch): third-party notices" \
        --out "$doc/THIRD-PARTY-NOTICES.txt" "$agent.map" "$carkey.map" >/dev/null || die "no notices for $arch"
    chmod 0644 "$doc/THIRD-PARTY-NOTICES.txt"
    # The documentation the unit's Documentation= and the packaged agent.json name, laid out as
    # in the repository so the links between the files work. Not compressed: systemctl status
    # shows the file: links, and a browser or less opens them as they are.
    install -D -m 0644 "$root/README.md" "$doc/README.md"
    install -D -m 0644 "$board/README.md" "$doc/board/README.md"
    install -D -m 0644 "$board/raspberrypi/config.txt" "$doc/board/raspberrypi/config.txt"
    local page
    for page in "$root"/docs/*.md; do
        install -D -m 0644 "$page" "$doc/docs/$(basename "$page")"
    done
    # A native package (the packaging lives in the project's tree, the version has no Debian
    # revision): its changelog is changelog.gz, not changelog.Debian.gz (lintian:
    # wrong-name-for-changelog-of-native-package).
    fill "$templates/changelog.in" VERSION="$version" COMMIT="$commit" MAINTAINER="$maintainer" \
        DATE="$(date -u -R -d "@$SOURCE_DATE_EPOCH")" | gzip -9n >"$doc/changelog.gz"
    chmod 0644 "$doc/changelog.gz"
    install -d -m 0755 "$stage/usr/share/man/man8" "$stage/usr/share/man/man1"
    gzip -9n <"$here/man/carkey-agent.8" >"$stage/usr/share/man/man8/carkey-agent.8.gz"
    gzip -9n <"$here/man/carkey.1" >"$stage/usr/share/man/man1/carkey.1.gz"
    chmod 0644 "$stage"/usr/share/man/man*/*.gz
    install -D -m 0644 "$templates/lintian-overrides" "$stage/usr/share/lintian/overrides/carkey-agent"

    local debian=$stage/DEBIAN
    install -d -m 0755 "$debian"
    # Installed-Size in KiB, counted as dpkg-gencontrol does: a KiB per started KiB of each
    # file, one per directory.
    local size
    size=$(find "$stage" -path "$debian" -prune -o \( -type f -printf '%s\n' -o -type d -printf '1\n' \) |
        awk '{ n += ($1 == 1 ? 1 : int(($1 + 1023) / 1024)) } END { print n }')
    fill "$templates/control.in" VERSION="$version" ARCH="$arch" MAINTAINER="$maintainer" \
        INSTALLED_SIZE="$size" >"$debian/control"
    echo /etc/opencarkey/agent.json >"$debian/conffiles"
    (cd "$stage" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -print0 |
        LC_ALL=C sort -z | xargs -0 md5sum | sed 's| \./| |') >"$debian/md5sums"
    local text=${fallback//$'\n'/$'\n'        }
    fill "$templates/postinst.in" SYSUSERS_FALLBACK="        $text" UDEV_SUBSYSTEMS="$subsystems" >"$debian/postinst"
    install -m 0755 "$templates/prerm" "$templates/postrm" "$debian/"
    chmod 0755 "$debian/postinst"
    chmod 0644 "$debian/control" "$debian/conffiles" "$debian/md5sums"

    mkdir -p "$out"
    local deb=$out/carkey-agent_${version}_${arch}.deb
    dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
    echo "deb: $deb ($(du -k "$deb" | cut -f1) KiB, installed $size KiB)"
    "$root/scripts/licensing/sbom.py" --artifact "$deb" --version "$version" --out "${deb%.deb}.spdx.json" \
        --binary "carkey-agent=$agent:$agent.map" --binary "carkey=$carkey:$carkey.map" | sed 's/^/deb: /'
}

built=0
for arch in "${archs[@]}"; do
    [[ -n ${machine[$arch]:-} ]] || die "unknown architecture $arch (amd64 or arm64)"
    missing=
    for part in agent carkey; do
        [[ -f ${binary[$arch-$part]} ]] || missing+=" ${binary[$arch-$part]}"
    done
    if [[ -n $missing ]]; then
        [[ ${CARKEY_REQUIRE_ARTIFACTS:-0} == 1 ]] && die "$arch: missing$missing"
        echo "deb: skipped $arch: missing$missing" >&2
        continue
    fi
    build_one "$arch"
    built=$((built + 1))
done
[[ $built -gt 0 ]] || die "no package built (no binaries; run make static / make static-aarch64)"

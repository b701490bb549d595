#!/usr/bin/env bash
# The relink kit of a release: the project's compiled objects and SwiftPM's link line for
# carkey-agent and carkey, so that whoever has the binaries can link them again against a
# modified libgpiod or glibc (both LGPL-2.1-or-later, linked statically).
#
# Usage: scripts/licensing/relink-kit.sh [--chroot DIR] --scratch DIR --binaries DIR --out KIT.tar.gz
#   --scratch   the SwiftPM scratch path `make static` built in (its release.yaml and objects)
#   --binaries  the folder with the stripped binaries the release ships (build/static): the kit
#               is refused unless the objects link to exactly those (stripped, byte for byte)
#   --chroot    the scratch path is of a cross build run in this chroot (make static-aarch64:
#               /var/cache/opencarkey-aarch64/amd64, scratch DIR/ock/scratch-gpiod-v1); the
#               kit then also holds the static libraries the build took from its own folders
#               and links with an aarch64 SDK (README-aarch64)
# The kit's top folder (the tarball's name without .tar.gz) holds objects/ (each module's .o
# files and one list per product), lib/libmosquitto.a (built here from Debian's source; Debian
# ships no static one), link-args/PRODUCT (the link command, one argument a line, with @KIT@
# and @OUT@ for the kit and the output folder), link.sh and README.
# Reproducible: names sorted, owner 0, mtimes from the last commit, gzip without a timestamp.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
scratch= binaries= out= chroot=
while [[ $# -gt 0 ]]; do
    case $1 in
        --chroot) chroot=$(cd "${2:?}" && pwd); shift 2 ;;
        --scratch) scratch=${2:?}; shift 2 ;;
        --binaries) binaries=${2:?}; shift 2 ;;
        --out) out=${2:?}; shift 2 ;;
        *) echo "relink-kit: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n $scratch && -n $binaries && -n $out ]] || { echo "relink-kit: --scratch, --binaries and --out are needed" >&2; exit 2; }
scratch=$(cd "$scratch" && pwd)
manifest=$scratch/release.yaml
[[ -f $manifest ]] || { echo "relink-kit: no $manifest (make static)" >&2; exit 1; }

name=$(basename "$out" .tar.gz)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
kit=$stage/$name
mkdir -p "$kit/objects" "$kit/lib" "$kit/link-args"

# strip_like_the_build IN OUT: the strip the release binaries went through (the cross build's
# aarch64 strip in its chroot), so the comparison below is byte for byte.
strip_like_the_build() {
    if [[ -z $chroot ]]; then strip -o "$2" "$1"; return; fi
    local inside=/tmp/relink-kit-$$.stripped
    chroot "$chroot" /usr/bin/aarch64-linux-gnu-strip -o "$inside" "${1#"$chroot"}"
    mv "$chroot$inside" "$2"
}
link_args=(python3 "$here/link-args.py")
[[ -z $chroot ]] || link_args+=(--chroot "$chroot")
for product in carkey-agent carkey; do
    linked=$scratch/release/$product
    [[ -f $linked && -f $binaries/$product ]] || { echo "relink-kit: no $linked or $binaries/$product" >&2; exit 1; }
    strip_like_the_build "$linked" "$stage/$product.stripped"
    cmp -s "$stage/$product.stripped" "$binaries/$product" ||
        { echo "relink-kit: $linked is not the link of $binaries/$product (stale objects? make static)" >&2; exit 1; }
    rm "$stage/$product.stripped"
    # The link command with every path of this machine turned into a path in the kit.
    "${link_args[@]}" "$manifest" "$product" "$root" "$kit" > "$kit/link-args/$product"
done
install -m 0755 "$here/relink-kit/link.sh" "$kit/link.sh"
if [[ -z $chroot ]]; then
    cp "$root/build/mosquitto/lib/libmosquitto.a" "$kit/lib/"
    install -m 0644 "$here/relink-kit/README" "$kit/README"
    swift_version=$(swiftc --version 2>/dev/null | sed -n 's/.*Swift version \([^ ]*\).*/\1/p' | head -1)
    echo "STRIP=strip" > "$kit/kit.conf"
else
    install -m 0644 "$here/relink-kit/README-aarch64" "$kit/README"
    swift_version=$(OPENCARKEY_AARCH64_CACHE=$(dirname "$chroot") "$root/scripts/aarch64/in-chroot.sh" /usr/bin/swiftc --version 2>/dev/null | sed -n 's/.*Swift version \([^ ]*\).*/\1/p' | head -1)
    printf 'STRIP=aarch64-linux-gnu-strip\nNEEDS_SDK=1\n' > "$kit/kit.conf"
fi
sed -i "s/@SWIFT_VERSION@/${swift_version:-unknown}/" "$kit/README"

epoch=$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)
mkdir -p "$(dirname "$out")"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$stage" -cf - "$name" | gzip -n -9 > "$out"
echo "relink-kit: $out ($(stat -c %s "$out") bytes, $(find "$kit/objects" -name '*.o' | wc -l) objects)"

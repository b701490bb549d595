#!/usr/bin/env bash
# `make glibc`: the release carkey-agent and carkey linked against the system's glibc and C
# libraries (libssl, SQLite, libmosquitto, libgpiod, libbluetooth) with the Swift runtime linked
# in, in build/glibc: the objects `make static` compiled, linked again.
#
# Not shipped: every key vault works with the static binary (TPM 2.0 spoken directly, PKCS#11
# through carkey-pkcs11-bridge). It stays as the dynamically linked counterpart the vault tests
# also run against (make test), and for whoever wants the system's OpenSSL on a board.
#
# Why relink instead of a second `swift build`: the static and glibc builds then run the same
# compiled code (what the vault tests pass on is what the static binary runs), and the glibc
# build costs a link, not a second release compile. The link command is SwiftPM's own, read
# from its build manifest (.build/release.yaml), with -static-executable replaced by
# -static-stdlib and the static libmosquitto's folder left out.
#
# SCRATCH selects the SwiftPM scratch path (default .build, as make static); GLIBC_OUT the
# output folder (default build/glibc). Run after `make static` (the Makefile does).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scratch=${SCRATCH:-.build}
[[ $scratch == /* ]] || scratch=$root/$scratch
out_dir=${GLIBC_OUT:-$root/build/glibc}
manifest=$scratch/release.yaml
start=$(date +%s)
mkdir -p "$out_dir"

if [[ ! -f $manifest ]]; then
    echo "glibc: no $manifest: run make static first" >&2
    exit 1
fi

# relink PRODUCT: SwiftPM's link command for PRODUCT, as a glibc-linked executable.
relink() {
    local product=$1
    local unstripped=$out_dir/$product.unstripped
    python3 - "$manifest" "$product" "$unstripped" "$out_dir/$product.map" "$root/build/mosquitto/lib" "$root/scripts" > "$out_dir/$product.link" <<'PY'
import sys
sys.path.insert(0, sys.argv[6])
from swiftpm_link import static_link_args
manifest, product, output, link_map, static_mosquitto = sys.argv[1:6]
args = static_link_args(manifest, product, "glibc")
relinked = []
skip = False
for index, arg in enumerate(args):
    if skip:
        skip = False
        continue
    if arg == "-static-executable":
        relinked.append("-static-stdlib")
    elif arg == "-L" + static_mosquitto:
        continue
    elif arg == "-o":
        relinked += ["-o", output]
        skip = True
    elif arg.startswith("-Map="):
        relinked.append("-Map=" + link_map)
    else:
        relinked.append(arg)
print("\0".join(relinked), end="")
PY
    echo "glibc: linking $product (the make static objects, -static-stdlib)"
    if ! xargs -0 -a "$out_dir/$product.link" -- env > "$out_dir/$product.log" 2>&1; then
        cat "$out_dir/$product.log" >&2
        echo "glibc: link of $product failed" >&2
        exit 1
    fi
    cp "$unstripped" "$out_dir/$product"
    strip "$out_dir/$product"
    rm -f "$unstripped"
    local description version
    description=$(file -b "$out_dir/$product")
    if [[ $description != *"dynamically linked"* ]]; then
        echo "glibc: $product is not dynamically linked: $description" >&2
        exit 1
    fi
    version=$("$out_dir/$product" --version)
    echo "glibc: $out_dir/$product ($(stat -c %s "$out_dir/$product") bytes stripped): $version"
    echo "glibc: needs $(objdump -p "$out_dir/$product" | awk '/NEEDED/ {printf "%s ", $2}')"
}

relink carkey-agent
relink carkey
echo "glibc: took $(( $(date +%s) - start ))s"

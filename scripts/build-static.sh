#!/usr/bin/env bash
# `make static`: statically linked, stripped release carkey-agent and carkey for this machine
# (x86_64 glibc) in build/static, plus the linker map of carkey-agent
# (build/static/carkey-agent.map) that `carkey-bench size` (make bench) reads for its size
# breakdown.
#
# What it takes (found by experiment with Swift 6.3.1 on Debian 12):
#   swift build -c release --product carkey-agent \
#       -Xswiftc -static-executable -Xlinker -L<repo>/build/mosquitto/lib
# - Debian has no libmosquitto.a: scripts/build-libmosquitto-static.sh builds one from
#   Debian's source package and names it libmosquitto.a so the module map's
#   `link "mosquitto"` (-lmosquitto) finds it; with -static the linker skips the .so.
# - libssl.a, libcrypto.a, libsqlite3.a, libgpiod.a and libbluetooth.a come with the
#   Debian -dev packages.
# - No --start-group / -lstdc++ / -lz / -ldl flags are needed: with -static-executable
#   the Swift driver already wraps the objects and every autolinked library in
#   --start-group ... --end-group, and appends swift_static/linux/static-executable-args.lnk
#   (-lstdc++ -ldl -lpthread -lm ...). Debian's libcrypto.a does not use zlib.
# - The linker warns that getaddrinfo/getpwuid_r/dlopen "require at runtime the shared
#   libraries from the glibc version used for linking" (glibc NSS): the binary needs no
#   shared libraries to start, but NSS-based lookups (users, groups, hosts beyond
#   /etc/hosts and DNS) load the target's glibc NSS modules at run time.
#   Those warnings are kept in build/static/build.log and filtered from the terminal.
# - Size (issue 13), measured on the stripped carkey-agent (Swift 6.3.1, gold): the Swift
#   driver already passes --gc-sections for executables (see the link line with -v), so there
#   is nothing to add there; the linker is gold, whose -Map output is the GNU format.
#   -Osize for the project's modules (the Swift libraries come prebuilt) saves 446,464 bytes
#   (17,451,632 -> 17,005,168; the modules 2.70 -> 2.26 MB), same semantics and checks as -O.
#   --icf=safe (identical code folding, only for functions whose address is never taken, so
#   no pointer comparison can tell) saves 151,552 bytes alone; both: 16,857,712 bytes.
#   --icf=all saved about 0.3% more but may fold functions whose addresses are compared, so
#   it is not used. The crypto self-test (`demo`) passes on each variant.
#
# SCRATCH selects the SwiftPM scratch path (default .build, as `make static` uses);
# STATIC_OUT the output folder (default build/static).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scratch=${SCRATCH:-.build}
out_dir=${STATIC_OUT:-$root/build/static}
log=$out_dir/build.log
start=$(date +%s)

# Size options for the release build (measured above).
size_flags=(-Xswiftc -Osize -Xlinker --icf=safe)

"$root/scripts/build-libmosquitto-static.sh"
mkdir -p "$out_dir"
: > "$log"

# build PRODUCT: the static release link of one product, with its linker map next to it.
build() {
    local product=$1
    echo "static: swift build -c release --product $product -Xswiftc -static-executable" \
         "-Xlinker -L$root/build/mosquitto/lib -Xlinker -Map=$out_dir/$product.map ${size_flags[*]:-}"
    set +e +o pipefail
    swift build --scratch-path "$scratch" -c release --product "$product" \
        -Xswiftc -static-executable \
        -Xlinker -L"$root/build/mosquitto/lib" \
        -Xlinker -Map="$out_dir/$product.map" \
        "${size_flags[@]}" 2>&1 \
        | tee -a "$log" \
        | grep --line-buffered -v \
            -e 'in statically linked applications requires at runtime the shared libraries' \
            -e "the use of \`mktemp' is dangerous"
    local status=${PIPESTATUS[0]}
    set -e -o pipefail
    if [[ $status -ne 0 ]]; then
        echo "static: build of $product failed (full log: $log)" >&2
        exit "$status"
    fi
}

size() { stat -c %s "$1"; }
human() { numfmt --to=iec-i --suffix=B "$1"; }

# finish PRODUCT VERSION-PREFIX: strip a copy into the output folder and check it.
finish() {
    local product=$1 expected=$2
    local binary=$root/$scratch/release/$product
    [[ $scratch == /* ]] && binary=$scratch/release/$product
    local stripped=$out_dir/$product
    cp "$binary" "$stripped"
    strip "$stripped"
    local description version
    description=$(file -L "$binary")
    if [[ $description != *"statically linked"* ]]; then
        echo "static: $product is not statically linked: $description" >&2
        exit 1
    fi
    version=$("$stripped" --version)
    if [[ $version != "$expected"* ]]; then
        echo "static: '$stripped --version' printed '$version'" >&2
        exit 1
    fi
    echo "static: binary     $binary ($(human "$(size "$binary")"), with symbols)"
    echo "static: stripped   $stripped ($(size "$stripped") bytes, $(human "$(size "$stripped")"))"
    echo "static: file       ${description#*: }"
    echo "static: file (stripped copy) $(file -b "$stripped")"
    echo "static: --version  $version"
}

build carkey-agent
build carkey
finish carkey-agent "carkey-agent "
finish carkey "carkey "
# A GPL-only library in a binary the project ships under Apache-2.0 stops the build here, before
# anything is packaged (scripts/licensing/linked.py lists those libraries).
if ! "$root/scripts/licensing/linked.py" check-gpl "$out_dir/carkey-agent.map" "$out_dir/carkey.map" >/dev/null; then
    echo "static: a GPL-only library was linked in (above); the binaries must not ship" >&2
    exit 1
fi
echo "static: link map   $out_dir/carkey-agent.map ($(human "$(size "$out_dir/carkey-agent.map")"))"
echo "static: took $(( $(date +%s) - start ))s"

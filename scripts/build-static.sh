#!/usr/bin/env bash
# `make static`: a statically linked release carkey-agent for this machine (x86_64 glibc).
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
#
# SCRATCH selects the SwiftPM scratch path (default .build, as `make static` uses).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scratch=${SCRATCH:-.build}
out_dir=$root/build/static
log=$out_dir/build.log
start=$(date +%s)

"$root/scripts/build-libmosquitto-static.sh"
mkdir -p "$out_dir"

echo "static: swift build -c release --product carkey-agent -Xswiftc -static-executable" \
     "-Xlinker -L$root/build/mosquitto/lib"
set +e +o pipefail
swift build --scratch-path "$scratch" -c release --product carkey-agent \
    -Xswiftc -static-executable \
    -Xlinker -L"$root/build/mosquitto/lib" 2>&1 \
    | tee "$log" \
    | grep --line-buffered -v \
        -e 'in statically linked applications requires at runtime the shared libraries' \
        -e "the use of \`mktemp' is dangerous"
status=${PIPESTATUS[0]}
set -e -o pipefail
if [[ $status -ne 0 ]]; then
    echo "static: build failed (full log: $log)" >&2
    exit "$status"
fi

binary=$root/$scratch/release/carkey-agent
[[ $scratch == /* ]] && binary=$scratch/release/carkey-agent
stripped=$out_dir/carkey-agent
cp "$binary" "$stripped"
strip "$stripped"

description=$(file -L "$binary")
if [[ $description != *"statically linked"* ]]; then
    echo "static: not statically linked: $description" >&2
    exit 1
fi
version=$("$stripped" --version)
if [[ $version != "carkey-agent "* ]]; then
    echo "static: '$stripped --version' printed '$version'" >&2
    exit 1
fi

size() { stat -c %s "$1"; }
human() { numfmt --to=iec-i --suffix=B "$1"; }
echo "static: binary     $binary ($(human "$(size "$binary")"), with symbols)"
echo "static: stripped   $stripped ($(size "$stripped") bytes, $(human "$(size "$stripped")"))"
echo "static: file       ${description#*: }"
echo "static: file (stripped copy) $(file -b "$stripped")"
echo "static: --version  $version"
echo "static: took $(( $(date +%s) - start ))s"

#!/usr/bin/env bash
# Build a static libmosquitto (client library only) for `make static`.
#
# Debian ships libmosquitto only as a shared library, so this fetches Debian's own
# source package (same upstream version and patches as libmosquitto-dev) and builds
# libmosquitto_static.a with cmake. Result:
#     build/mosquitto/lib/libmosquitto.a   (a copy named so that -lmosquitto finds it)
# Steps: add a deb-src entry (/etc/apt/sources.list.d/opencarkey-src.sources, mirroring
# the existing Debian "deb" entries), apt-get update, apt-get source mosquitto into
# build/mosquitto-src, cmake into build/mosquitto/build.
# Idempotent: does nothing if the library is already there (FORCE=1 rebuilds).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src_dir=$root/build/mosquitto-src
build_dir=$root/build/mosquitto/build
lib_dir=$root/build/mosquitto/lib
result=$lib_dir/libmosquitto.a

if [[ -f $result && ${FORCE:-0} != 1 ]]; then
    echo "libmosquitto (static): $result (already built)"
    exit 0
fi

if [[ $(id -u) -eq 0 ]]; then as_root=(); else as_root=(sudo); fi

# Build tools: only for this script, not part of `make deps`.
"$root/scripts/deps.sh" cmake dpkg-dev build-essential zlib1g-dev xz-utils file

# 1. deb-src entry. Debian 12 keeps its sources in deb822 format in
#    /etc/apt/sources.list.d/debian.sources; older images use /etc/apt/sources.list.
src_list=/etc/apt/sources.list.d/opencarkey-src.sources
if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    # One deb-src stanza per stanza whose Types include "deb": same URIs, Suites,
    # Components and Signed-By (comments dropped).
    entry=$(awk '
        BEGIN { RS = ""; ORS = "\n\n" }
        {
            n = split($0, lines, "\n"); has_deb = 0; out = ""
            for (i = 1; i <= n; i++) {
                line = lines[i]
                if (line ~ /^#/) continue
                if (line ~ /^Types:/) {
                    if (line ~ /(^Types:|[ \t])deb([ \t]|$)/) has_deb = 1
                    line = "Types: deb-src"
                }
                out = out line "\n"
            }
            if (has_deb) { sub(/\n$/, "", out); print out }
        }' /etc/apt/sources.list.d/debian.sources)
    src_list=/etc/apt/sources.list.d/opencarkey-src.sources
elif [[ -f /etc/apt/sources.list ]]; then
    entry=$(sed -n 's/^deb[[:space:]]/deb-src /p' /etc/apt/sources.list)
    src_list=/etc/apt/sources.list.d/opencarkey-src.list
else
    echo "build-libmosquitto-static: no Debian apt sources found" >&2
    exit 1
fi
if [[ -z $entry ]]; then
    echo "build-libmosquitto-static: no 'deb' entries to mirror as deb-src" >&2
    exit 1
fi
if [[ ! -f $src_list ]] || [[ $(cat "$src_list") != "$entry" ]]; then
    printf '%s\n' "$entry" | "${as_root[@]}" tee "$src_list" >/dev/null
    echo "build-libmosquitto-static: wrote $src_list"
fi
"${as_root[@]}" apt-get update -qq >/dev/null

# 2. Debian's source package (unpacked with its patches applied by dpkg-source).
mkdir -p "$src_dir"
source_tree=$(find "$src_dir" -mindepth 1 -maxdepth 1 -type d -name 'mosquitto-*' | sort | tail -n 1)
if [[ -z $source_tree ]]; then
    (cd "$src_dir" && apt-get source -qq mosquitto >/dev/null 2>"$src_dir/apt-get-source.log") || {
        cat "$src_dir/apt-get-source.log" >&2
        exit 1
    }
    source_tree=$(find "$src_dir" -mindepth 1 -maxdepth 1 -type d -name 'mosquitto-*' | sort | tail -n 1)
fi
echo "build-libmosquitto-static: source $source_tree"

# 3. Client library only, static, position-independent; TLS and threading on.
mkdir -p "$build_dir"
cmake -S "$source_tree" -B "$build_dir" -Wno-dev \
    -DCMAKE_BUILD_TYPE=Release \
    -DWITH_STATIC_LIBRARIES=ON -DWITH_PIC=ON \
    -DWITH_TLS=ON -DWITH_TLS_PSK=ON -DWITH_THREADING=ON -DWITH_EC=ON \
    -DWITH_BROKER=OFF -DWITH_APPS=OFF -DWITH_CLIENTS=OFF -DWITH_PLUGINS=OFF \
    -DWITH_CJSON=OFF -DDOCUMENTATION=OFF -DWITH_LIB_CPP=OFF \
    -DWITH_SRV=OFF >"$root/build/mosquitto/cmake.log" 2>&1
cmake --build "$build_dir" --target libmosquitto_static -j "$(nproc)" >"$root/build/mosquitto/build.log" 2>&1

built=$(find "$build_dir" -name libmosquitto_static.a | head -n 1)
if [[ -z $built ]]; then
    echo "build-libmosquitto-static: libmosquitto_static.a not produced (see build/mosquitto/build.log)" >&2
    exit 1
fi
mkdir -p "$lib_dir"
cp "$built" "$result"
echo "libmosquitto (static): $result"

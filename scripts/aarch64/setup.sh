#!/usr/bin/env bash
# Cached, idempotent set-up for the aarch64 cross build (scripts/aarch64/build.sh runs it).
#
# Under $OPENCARKEY_AARCH64_CACHE (default /var/cache/opencarkey-aarch64), as root:
#   amd64/   trixie amd64 chroot with swiftlang (the cross compiler, native speed), cmake,
#            binutils-aarch64-linux-gnu (strip), and under /ock everything built from it:
#            /ock/sdk (the Swift SDK bundle), /ock/mosquitto (static libmosquitto for aarch64),
#            /ock/gpiod-v1|v2 (libgpiod headers and .a), /ock/src and /ock/scratch-* (build.sh),
#            /ock/softhsm-bookworm (bookworm arm64 SoftHSM2 and glibc, for the bridge test)
#   arm64/   trixie's swiftlang:arm64 and the -dev packages with their dependencies, downloaded
#            by this machine's apt and unpacked with dpkg-deb (no maintainer scripts, no qemu);
#            the SDK sysroot is a trimmed copy of it
#   apt/     apt's lists for those downloads, one folder per suite
#   stamps/  one file per finished step, named after what the step depends on (suite,
#            swiftlang version, recipe revision): a rerun skips every stamped step, a changed
#            dependency reruns just that step, an interrupted step starts over
#   logs/    the output of each step
# Why two trees: trixie's swiftlang 6.0.3 needs glibc 2.38 (not on bookworm), has no aarch64
# standard library for the amd64 compiler, and compiling under emulation is about 15x slower.
# The recipe and its pitfalls: docs/building-aarch64.md.
#
# Variables: GPIOD_API=v1|v2 (default v1), SWIFTLANG_VERSION, OPENCARKEY_DEBIAN_MIRROR,
# OPENCARKEY_AARCH64_PRUNE=1 (remove arm64/ once the SDK exists; saves about 2 GB, but a
# change of the SDK recipe then redoes the arm64 steps).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/common.sh"

if [[ $(id -u) -ne 0 ]]; then
    echo "aarch64: setup needs root (debootstrap, chroot, mounts)" >&2
    exit 1
fi
if [[ ${OPENCARKEY_AARCH64_LOCKED:-0} != 1 ]]; then take_lock; fi
trap unmount_all EXIT
mkdir -p "$STAMPS" "$LOGS"
setup_start=$(now)

# Bump a revision when the commands of its step change, so existing caches redo that step.
# (SDK 6: the tss2 and PKCS#11 headers of step 3c in the sysroot.)
SDK_REVISION=6
MOSQUITTO_REVISION=2

# run_logged NAME CMD...: output to logs/NAME.log; the tail of it on failure.
run_logged() {
    local name=$1; shift
    if ! "$@" >"$LOGS/$name.log" 2>&1; then
        echo "aarch64: step '$name' failed; last lines of $LOGS/$name.log:" >&2
        tail -n 25 "$LOGS/$name.log" >&2
        exit 1
    fi
}
stamped() { [[ -f $STAMPS/$1 ]]; }
stamp() { date -u +%FT%TZ > "$STAMPS/$1"; }

# dpkg in the amd64 chroot skips documentation, manuals and translations (disk), and does not
# fsync each file it unpacks (a half-installed chroot is removed and made again anyway).
nodoc() {
    mkdir -p "$1/etc/dpkg/dpkg.cfg.d"
    echo force-unsafe-io > "$1/etc/dpkg/dpkg.cfg.d/02-opencarkey-unsafe-io"
    printf 'path-exclude=/usr/share/doc/*\npath-include=/usr/share/doc/*/copyright\npath-exclude=/usr/share/man/*\npath-exclude=/usr/share/info/*\npath-exclude=/usr/share/locale/*\npath-include=/usr/share/locale/locale.alias\n' \
        > "$1/etc/dpkg/dpkg.cfg.d/01-opencarkey-nodoc"
}
sources() {
    printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$MIRROR" \
        > "$1/etc/apt/sources.list.d/debian.sources"
    rm -f "$1/etc/apt/sources.list"
}

# ---- 1. amd64 chroot -------------------------------------------------------------------
if ! stamped amd64-debootstrap-trixie; then
    t=$(now); echo "aarch64: debootstrap trixie amd64 -> $AMD64"
    safe_rm "$AMD64"
    run_logged amd64-debootstrap debootstrap --variant=minbase --include=ca-certificates trixie "$AMD64" "$MIRROR"
    nodoc "$AMD64"; sources "$AMD64"
    stamp amd64-debootstrap-trixie; step_done "amd64 debootstrap" "$t"
fi
amd64_packages="swiftlang=$SWIFTLANG_VERSION libc6-dev cmake make binutils-aarch64-linux-gnu file dpkg-dev xz-utils rsync"
if ! stamped "amd64-swiftlang-$SWIFTLANG_VERSION"; then
    t=$(now); echo "aarch64: swiftlang $SWIFTLANG_VERSION, cmake into the amd64 chroot"
    mount_chroot "$AMD64"
    # deb-src for `apt-get source mosquitto`.
    sed -i 's/^Types: deb$/Types: deb deb-src/' "$AMD64/etc/apt/sources.list.d/debian.sources"
    run_logged amd64-packages in_amd64 bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $amd64_packages && apt-get clean"
    # The installed swift must be the pinned one (check the frontend: usr/bin/swift is an
    # absolute symlink that resolves only inside the chroot).
    [[ -x $AMD64/usr/libexec/swift/bin/swift-frontend ]] || { echo "aarch64: swiftlang not installed in $AMD64" >&2; exit 1; }
    unmount_all
    stamp "amd64-swiftlang-$SWIFTLANG_VERSION"; step_done "amd64 packages" "$t"
fi

# ---- 2. arm64 tree (the SDK's source), unpacked, not installed ----------------------------
# A cross sysroot needs the packages' files, not their maintainer scripts: this machine's apt
# resolves the dependencies of the wanted arm64 packages against an empty dpkg status (so the
# whole closure is fetched, for arm64 only) and `dpkg-deb -x` unpacks each one. Nothing arm64
# runs, so no qemu and no binfmt_misc; about 100 packages, 500 MB of downloads. What the
# maintainer scripts would have done and a sysroot needs is done here: the merged-/usr links;
# absolute symlinks are made relative when the SDK is trimmed from it (step 4).
# index_debs NAME DEB...: which package ships each static archive and object of an unpacked
# tree, and the packages' copyright files, in $INDEX/NAME.tsv and $INDEX/NAME-docs, for the
# third-party notices and SBOMs: `dpkg-deb -x` leaves no dpkg database to ask
# (scripts/aarch64/index-debs.py says what the index holds).
index_debs() {
    local name=$1; shift
    mkdir -p "$INDEX"
    rm -rf "$INDEX/$name-docs"
    run_logged "index-$name" python3 "$here/index-debs.py" "$INDEX/$name.tsv" "$INDEX/$name-docs" "$@"
}
arm64_packages="swiftlang=$SWIFTLANG_VERSION libc6-dev libstdc++-14-dev libssl-dev libsqlite3-dev libbluetooth-dev \
    libmosquitto-dev zlib1g-dev libzstd-dev"
arm64_stamp="arm64-unpacked-trixie-$SWIFTLANG_VERSION"
sdk_stamp="sdk-$SWIFTLANG_VERSION-r$SDK_REVISION"
if ! stamped "$sdk_stamp" && ! stamped "$arm64_stamp"; then
    # swiftlang:arm64 for the aarch64 standard library (swift_static), the -dev packages for
    # the C libraries; libgpiod, OpenSSL and SQLite come from bookworm (step 3, 3b).
    t=$(now); echo "aarch64: trixie arm64 packages (swiftlang:arm64, -dev) unpacked into $ARM64"
    rm -f "$STAMPS"/arm64-*
    safe_rm "$ARM64"
    conf=$(host_apt trixie-arm64 trixie)
    run_logged arm64-packages env APT_CONFIG="$conf" bash -c "apt-get update -qq && apt-get install -y -qq --download-only $arm64_packages"
    debs=("$CACHE/apt/trixie-arm64/archives"/*.deb)
    [[ -f ${debs[0]} ]] || { echo "aarch64: no arm64 packages downloaded (see $LOGS/arm64-packages.log)" >&2; exit 1; }
    unpack_debs "$ARM64" "${debs[@]}"
    # Merged /usr, as debootstrap leaves it: the ELF interpreter is /lib/ld-linux-aarch64.so.1
    # and linker scripts name /lib/aarch64-linux-gnu.
    merge_usr "$ARM64"
    [[ -e $ARM64/usr/libexec/swift/lib/swift_static/linux/libswiftCore.a && -e $ARM64/usr/lib/aarch64-linux-gnu/libc.a ]] || {
        echo "aarch64: swift_static or libc.a missing in $ARM64" >&2; exit 1; }
    index_debs trixie-arm64 "${debs[@]}"
    rm -rf "$CACHE/apt/trixie-arm64/archives"
    stamp "$arm64_stamp"; step_done "arm64 packages (downloaded, unpacked: ${#debs[@]})" "$t"
fi

# ---- 3. libgpiod for aarch64, outside the sysroot -------------------------------------------
# Kept apart per API in /ock/gpiod-vN with its own libgpiod.pc (absolute paths in the amd64
# chroot), so switching GPIOD_API does not touch the SDK; build.sh puts the chosen one on the
# pkg-config path. Only the static library and the header are used.
# arm64_debs NAME SUITE PACKAGES...: the packages of SUITE for arm64 (those alone, not their
# dependencies) unpacked into $AMD64/ock/NAME/root.
arm64_debs() {
    local name=$1 suite=$2; shift 2
    local dir=$AMD64/ock/$name conf
    conf=$(host_apt "$suite-arm64" "$suite")
    local archives=$CACHE/apt/$suite-arm64/archives
    rm -rf "$archives/$name" && mkdir -p "$archives/$name"
    run_logged "$name" env APT_CONFIG="$conf" bash -c "apt-get update -qq && cd ${archives@Q}/$name && apt-get download $*"
    rm -rf "$dir" && mkdir -p "$dir/root"
    unpack_debs "$dir/root" "$archives/$name"/*.deb
    index_debs "$name" "$archives/$name"/*.deb
    rm -rf "${archives:?}/$name"
}
gpiod_fetch() {  # API SUITE PACKAGES...
    local api=$1 suite=$2; shift 2
    local dir=$AMD64/ock/gpiod-$api
    arm64_debs "gpiod-$api" "$suite" "$@"
    [[ -f $dir/root/usr/include/gpiod.h && -f $dir/root/usr/lib/aarch64-linux-gnu/libgpiod.a ]] || {
        echo "aarch64: libgpiod $api: gpiod.h or libgpiod.a missing in $dir" >&2; exit 1; }
    local version
    version=$(sed -n 's/^Version: //p' "$dir/root/usr/lib/aarch64-linux-gnu/pkgconfig/libgpiod.pc")
    printf 'prefix=/ock/gpiod-%s/root/usr\nincludedir=${prefix}/include\nlibdir=${prefix}/lib/aarch64-linux-gnu\n\nName: libgpiod\nDescription: libgpiod %s for aarch64 (OpenCarKey cross build)\nVersion: %s\nLibs: -L${libdir} -lgpiod\nCflags: -I${includedir}\n' \
        "$api" "$suite" "$version" > "$dir/libgpiod.pc"
}
if [[ $GPIOD_API == v1 ]] && ! stamped gpiod-v1-bookworm; then
    t=$(now); gpiod_fetch v1 bookworm libgpiod-dev libgpiod2
    stamp gpiod-v1-bookworm; step_done "libgpiod v1.6 (bookworm arm64)" "$t"
fi
if [[ $GPIOD_API == v2 ]] && ! stamped gpiod-v2-trixie; then
    t=$(now); gpiod_fetch v2 trixie libgpiod-dev libgpiod3
    stamp gpiod-v2-trixie; step_done "libgpiod v2 (trixie arm64)" "$t"
fi

# ---- 3b. OpenSSL and SQLite for aarch64 from bookworm, outside the sysroot ------------------
# The same versions the x86_64 build and every test on this machine use (bookworm's OpenSSL
# 3.0 and SQLite 3.40, security-supported by Debian), so what is tested is what ships. trixie's
# OpenSSL 3.5 also made the agent 2.4 MB bigger: libcrypto 4.43 MB against 2.88, libssl 0.82
# against 0.40, plus 0.66 MB of zlib and zstd it links (carkey-bench size, 2026-12-02).
# The SDK's sysroot leaves trixie's copies out (step 4), so a wrong search path fails the
# build instead of mixing headers of one version with the library of another.
if ! stamped clibs-bookworm; then
    t=$(now)
    arm64_debs clibs-bookworm bookworm libssl-dev libssl3 libsqlite3-dev libsqlite3-0
    dir=$AMD64/ock/clibs-bookworm
    [[ -f $dir/root/usr/lib/aarch64-linux-gnu/libcrypto.a && -f $dir/root/usr/lib/aarch64-linux-gnu/libssl.a \
       && -f $dir/root/usr/lib/aarch64-linux-gnu/libsqlite3.a && -f $dir/root/usr/include/openssl/ssl.h \
       && -f $dir/root/usr/include/sqlite3.h ]] || { echo "aarch64: bookworm OpenSSL/SQLite files missing in $dir" >&2; exit 1; }
    ssl_version=$(sed -n 's/^Version: //p' "$dir/root/usr/lib/aarch64-linux-gnu/pkgconfig/openssl.pc")
    sqlite_version=$(sed -n 's/^Version: //p' "$dir/root/usr/lib/aarch64-linux-gnu/pkgconfig/sqlite3.pc")
    # Absolute paths in the amd64 chroot; configuration.h is in the multiarch include folder.
    head='prefix=/ock/clibs-bookworm/root/usr\nincludedir=${prefix}/include\nlibdir=${prefix}/lib/aarch64-linux-gnu\n\n'
    cflags='Cflags: -I${includedir} -I${includedir}/aarch64-linux-gnu\n'
    printf "${head}Name: OpenSSL\nDescription: bookworm OpenSSL for aarch64 (OpenCarKey cross build)\nVersion: %s\nRequires: libssl libcrypto\n" "$ssl_version" > "$dir/openssl.pc"
    printf "${head}Name: OpenSSL-libssl\nDescription: bookworm libssl for aarch64\nVersion: %s\nRequires.private: libcrypto\nLibs: -L\${libdir} -lssl\n${cflags}" "$ssl_version" > "$dir/libssl.pc"
    printf "${head}Name: OpenSSL-libcrypto\nDescription: bookworm libcrypto for aarch64\nVersion: %s\nLibs: -L\${libdir} -lcrypto\nLibs.private: -ldl -pthread\n${cflags}" "$ssl_version" > "$dir/libcrypto.pc"
    printf "${head}Name: SQLite\nDescription: bookworm SQLite for aarch64\nVersion: %s\nLibs: -L\${libdir} -lsqlite3\nLibs.private: -lm -ldl -lpthread\nCflags: -I\${includedir}\n" "$sqlite_version" > "$dir/sqlite3.pc"
    stamp clibs-bookworm; step_done "OpenSSL $ssl_version and SQLite $sqlite_version (bookworm arm64)" "$t"
fi

# ---- 3c. tss2 and PKCS#11 headers from bookworm, headers only ------------------------------
# CTSS2 and CPKCS11 import types and prototypes only: the agent dlopens libtss2-* and the
# PKCS#11 module at run time, so nothing is linked and no library may enter the sysroot (a
# stray `link` in a module map then fails the build instead of linking a shared object into
# the static agent). `apt-get download` takes the two packages alone, without libtss2-dev's
# dependencies (libcurl, json-c). Bookworm's versions, as on the build machine (tpm2-tss
# 3.2.1, p11-kit 0.24.1); step 4 copies usr/include/tss2 and usr/include/p11-kit-1.
if ! stamped keyheaders-bookworm; then
    t=$(now)
    arm64_debs keyheaders-bookworm bookworm libtss2-dev libp11-kit-dev
    dir=$AMD64/ock/keyheaders-bookworm
    for header in tss2/tss2_esys.h tss2/tss2_tctildr.h tss2/tss2_mu.h tss2/tss2_rc.h p11-kit-1/p11-kit/pkcs11.h; do
        [[ -f $dir/root/usr/include/$header ]] || { echo "aarch64: $header missing in $dir" >&2; exit 1; }
    done
    stamp keyheaders-bookworm; step_done "tss2 and PKCS#11 headers (bookworm arm64)" "$t"
fi

# ---- 3d. the package index, for caches made before it existed ------------------------------
# Steps 2, 3 and 3b index what they unpack. A cache they filled earlier gets its index here:
# the same packages downloaded again (apt's lists refreshed: they were not kept) and indexed,
# not unpacked. scripts/licensing/linked.py compares every indexed archive's SHA-256 with the
# file the link used, so an index of other versions than those unpacked is refused there, not
# shipped (the fix: remove stamps/arm64-* and stamps/sdk-*, and run again).
index_again() {  # NAME SUITE closure|alone PACKAGES...
    local name=$1 suite=$2 mode=$3; shift 3
    [[ -f $INDEX/$name.tsv ]] && return 0
    local t conf archives=$CACHE/apt/$suite-arm64/index-$name
    t=$(now)
    conf=$(host_apt "$suite-arm64" "$suite")
    rm -rf "$archives" && mkdir -p "$archives/partial"
    if [[ $mode == closure ]]; then
        run_logged "download-index-$name" env APT_CONFIG="$conf" bash -c "apt-get update -qq && apt-get install -y -qq --download-only \
            -o Dir::Cache::archives=${archives@Q} $*"
    else
        run_logged "download-index-$name" env APT_CONFIG="$conf" bash -c "apt-get update -qq && cd ${archives@Q} && apt-get download $*"
    fi
    index_debs "$name" "$archives"/*.deb
    rm -rf "$archives"
    step_done "package index $name" "$t"
}
index_again trixie-arm64 trixie closure $arm64_packages
index_again clibs-bookworm bookworm alone libssl-dev libssl3 libsqlite3-dev libsqlite3-0
if [[ $GPIOD_API == v1 ]]; then index_again gpiod-v1 bookworm alone libgpiod-dev libgpiod2; fi
if [[ $GPIOD_API == v2 ]]; then index_again gpiod-v2 trixie alone libgpiod-dev libgpiod3; fi

# A bookworm arm64 userland with SoftHSM2 for the PKCS#11 bridge's test under qemu
# (Aarch64StaticTests): Debian 12's glibc 2.36, which boards have, so the aarch64
# carkey-pkcs11-bridge is run against the C library it must work with, loading bookworm's arm64
# libsofthsm2.so. Not part of the build; a few MB.
if ! stamped softhsm-bookworm; then
    t=$(now)
    arm64_debs softhsm-bookworm bookworm libsofthsm2 softhsm2 softhsm2-common libc6 libgcc-s1 libssl3 libstdc++6 libsqlite3-0
    dir=$AMD64/ock/softhsm-bookworm
    for file in usr/lib/softhsm/libsofthsm2.so usr/bin/softhsm2-util lib/ld-linux-aarch64.so.1; do
        [[ -e $dir/root/$file ]] || { echo "aarch64: $file missing in $dir" >&2; exit 1; }
    done
    stamp softhsm-bookworm; step_done "SoftHSM2 and glibc 2.36 (bookworm arm64, for the bridge's test)" "$t"
fi

# ---- 4. the Swift SDK bundle -----------------------------------------------------------
# A trimmed copy of the arm64 tree: headers, the aarch64 libraries and crt files, gcc's
# runtime, the Swift resource directories. About 1 GB instead of 3.
if ! stamped "$sdk_stamp"; then
    t=$(now); echo "aarch64: Swift SDK bundle $SDK_ID"
    bundle=$AMD64$SDK_BUNDLE
    sysroot=$AMD64$SYSROOT
    rm -rf "$bundle"; mkdir -p "$sysroot"
    # What the sysroot takes from the arm64 tree (those that exist: lib64 does not on arm64).
    wanted=()
    for path in lib lib64 usr/include usr/lib/aarch64-linux-gnu usr/lib/gcc/aarch64-linux-gnu usr/lib/linux \
                usr/lib/ld-linux-aarch64.so.1 usr/share/pkgconfig \
                usr/libexec/swift/lib/swift usr/libexec/swift/lib/swift_static usr/libexec/swift/lib/clang; do
        [[ -e $ARM64/$path || -L $ARM64/$path ]] && wanted+=("$path")
    done
    # Left out: what only the arm64 tools need (perl, python, LLVM, ICU, gconv), and libgpiod
    # and the shared libmosquitto, which come from step 3 and 5.
    (cd "$ARM64" && tar -cf - \
        --exclude='usr/lib/aarch64-linux-gnu/perl*' --exclude='usr/lib/aarch64-linux-gnu/gconv' \
        --exclude='usr/lib/aarch64-linux-gnu/libLLVM*' --exclude='usr/lib/aarch64-linux-gnu/libclang*' \
        --exclude='usr/lib/aarch64-linux-gnu/libpython*' --exclude='usr/lib/aarch64-linux-gnu/libicu*' \
        --exclude='usr/lib/aarch64-linux-gnu/libgpiod*' --exclude='usr/include/gpiod*' \
        --exclude='usr/lib/aarch64-linux-gnu/pkgconfig/libgpiod*' \
        --exclude='usr/lib/aarch64-linux-gnu/libmosquitto.so*' \
        --exclude='usr/lib/aarch64-linux-gnu/libssl.*' --exclude='usr/lib/aarch64-linux-gnu/libcrypto.*' \
        --exclude='usr/lib/aarch64-linux-gnu/libsqlite3.*' --exclude='usr/include/openssl' \
        --exclude='usr/include/aarch64-linux-gnu/openssl' --exclude='usr/include/sqlite3*.h' \
        --exclude='usr/lib/aarch64-linux-gnu/pkgconfig/openssl.pc' --exclude='usr/lib/aarch64-linux-gnu/pkgconfig/libssl.pc' \
        --exclude='usr/lib/aarch64-linux-gnu/pkgconfig/libcrypto.pc' --exclude='usr/lib/aarch64-linux-gnu/pkgconfig/sqlite3.pc' \
        "${wanted[@]}") | tar -xf - -C "$sysroot"
    # Step 3c's headers (include folders only: no .so, no .pc enters the sysroot).
    mkdir -p "$sysroot/usr/include"
    cp -a "$AMD64/ock/keyheaders-bookworm/root/usr/include/tss2" "$AMD64/ock/keyheaders-bookworm/root/usr/include/p11-kit-1" \
        "$sysroot/usr/include/"
    # Absolute symlinks would resolve in the amd64 chroot: make them relative to the sysroot.
    while IFS= read -r link; do
        target=$(readlink "$link")
        [[ $target == /* ]] || continue
        ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$target")" "$link"
    done < <(find "$sysroot" -type l)
    # Debian's list names ICU libraries Swift 6 no longer ships.
    lnk=$sysroot/usr/libexec/swift/lib/swift_static/linux/static-executable-args.lnk
    [[ -f $lnk ]] && sed -i '/-licu/d' "$lnk"
    variant=$bundle/$SDK_ID/$TRIPLE
    # No supportedTriples: Debian's swift names this host x86_64-pc-linux-gnu, not -unknown-.
    cat > "$bundle/info.json" <<JSON
{ "schemaVersion": "1.0",
  "artifacts": { "$SDK_ID": { "type": "swiftSDK", "version": "$SWIFTLANG_VERSION",
    "variants": [ { "path": "$SDK_ID/$TRIPLE" } ] } } }
JSON
    # The resource paths: SwiftPM passes the sysroot only to clang, so without them the
    # compiler misses the SwiftGlibc module; --static-swift-stdlib (build.sh) selects the
    # static one, which a static link needs.
    cat > "$variant/swift-sdk.json" <<JSON
{ "schemaVersion": "4.0",
  "targetTriples": { "$TRIPLE": {
    "sdkRootPath": "sysroot",
    "swiftResourcesPath": "sysroot/usr/libexec/swift/lib/swift",
    "swiftStaticResourcesPath": "sysroot/usr/libexec/swift/lib/swift_static",
    "toolsetPaths": ["toolset.json"] } } }
JSON
    # lld from swiftlang (a relative linker path in a toolset does not resolve, -use-ld does).
    cat > "$variant/toolset.json" <<JSON
{ "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] },
  "cCompiler": { "extraCLIOptions": ["-fuse-ld=lld"] } }
JSON
    # Not `swift sdk install`, which would copy the sysroot into ~/.swiftpm: build.sh passes
    # --swift-sdks-path /ock/sdk. Check here that SwiftPM reads the bundle.
    mount_chroot "$AMD64"
    run_logged sdk-check in_amd64 swift sdk list --swift-sdks-path /ock/sdk
    unmount_all
    grep -qx "$SDK_ID" "$LOGS/sdk-check.log" || { echo "aarch64: SwiftPM does not list $SDK_ID (see $LOGS/sdk-check.log)" >&2; exit 1; }
    stamp "$sdk_stamp"; step_done "SDK bundle" "$t"
fi

# ---- 5. static libmosquitto for aarch64 ------------------------------------------------
# Debian ships no libmosquitto.a. Debian's source package, client library only (as
# scripts/build-libmosquitto-static.sh does for x86_64), cross-compiled with swiftlang's clang
# against the OpenSSL headers of step 3b (the library it will be linked with).
mosq_stamp="mosquitto-$SWIFTLANG_VERSION-r$MOSQUITTO_REVISION"
if ! stamped "$mosq_stamp"; then
    t=$(now); echo "aarch64: static libmosquitto for aarch64"
    rm -rf "$AMD64/ock/mosquitto" && mkdir -p "$AMD64/ock/mosquitto/src"
    cat > "$AMD64/ock/mosquitto/toolchain.cmake" <<CMAKE
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_SYSROOT $SYSROOT)
set(CMAKE_C_COMPILER /usr/libexec/swift/bin/clang)
set(CMAKE_C_COMPILER_TARGET $TRIPLE)
set(CMAKE_CXX_COMPILER /usr/libexec/swift/bin/clang++)
set(CMAKE_CXX_COMPILER_TARGET $TRIPLE)
set(CMAKE_AR /usr/bin/aarch64-linux-gnu-ar)
set(CMAKE_RANLIB /usr/bin/aarch64-linux-gnu-ranlib)
set(CMAKE_EXE_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
CMAKE
    mount_chroot "$AMD64"
    run_logged mosquitto in_amd64 bash -c '
        set -e
        cd /ock/mosquitto/src && apt-get source -qq mosquitto
        src=$(find /ock/mosquitto/src -mindepth 1 -maxdepth 1 -type d -name "mosquitto-*" | head -n 1)
        cmake -S "$src" -B /ock/mosquitto/build -Wno-dev \
            -DCMAKE_TOOLCHAIN_FILE=/ock/mosquitto/toolchain.cmake -DCMAKE_BUILD_TYPE=Release \
            -DWITH_STATIC_LIBRARIES=ON -DWITH_PIC=ON \
            -DWITH_TLS=ON -DWITH_TLS_PSK=ON -DWITH_THREADING=ON -DWITH_EC=ON \
            -DWITH_BROKER=OFF -DWITH_APPS=OFF -DWITH_CLIENTS=OFF -DWITH_PLUGINS=OFF \
            -DWITH_CJSON=OFF -DDOCUMENTATION=OFF -DWITH_LIB_CPP=OFF -DWITH_SRV=OFF \
            -DOPENSSL_INCLUDE_DIR=/ock/clibs-bookworm/root/usr/include \
            -DOPENSSL_CRYPTO_LIBRARY=/ock/clibs-bookworm/root/usr/lib/aarch64-linux-gnu/libcrypto.a \
            -DOPENSSL_SSL_LIBRARY=/ock/clibs-bookworm/root/usr/lib/aarch64-linux-gnu/libssl.a \
            -DCMAKE_C_FLAGS=-I/ock/clibs-bookworm/root/usr/include/aarch64-linux-gnu
        cmake --build /ock/mosquitto/build --target libmosquitto_static -j "$(nproc)"
        mkdir -p /ock/mosquitto/lib
        cp "$(find /ock/mosquitto/build -name libmosquitto_static.a | head -n 1)" /ock/mosquitto/lib/libmosquitto.a
        file /ock/mosquitto/build/lib/CMakeFiles/libmosquitto_static.dir/mosquitto.c.o'
    unmount_all
    grep -q 'ARM aarch64' "$LOGS/mosquitto.log" || { echo "aarch64: libmosquitto.a is not aarch64 (see $LOGS/mosquitto.log)" >&2; exit 1; }
    rm -rf "$AMD64/ock/mosquitto/src" "$AMD64/ock/mosquitto/build"
    stamp "$mosq_stamp"; step_done "libmosquitto.a (aarch64)" "$t"
fi

if [[ ${OPENCARKEY_AARCH64_PRUNE:-0} == 1 && -d $ARM64 ]]; then
    safe_rm "$ARM64"; rm -f "$STAMPS"/arm64-*
    echo "aarch64: removed $ARM64 (OPENCARKEY_AARCH64_PRUNE=1)"
fi
step_done "setup" "$setup_start"

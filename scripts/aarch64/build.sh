#!/usr/bin/env bash
# `make static-aarch64`: fully static, stripped carkey-agent and carkey for aarch64, cross-built
# on this x86_64 machine with Debian trixie's Swift 6.0.3 (see scripts/aarch64/setup.sh and
# docs/building-aarch64.md).
#
# Writes to build/aarch64 (OPENCARKEY_AARCH64_OUT overrides):
#   carkey-agent, carkey             stripped, "ARM aarch64, statically linked"
#   carkey-pkcs11-bridge             stripped, dynamically linked (the PKCS#11 vault's helper)
#   carkey-agent.map, carkey.map     lld link maps of the unstripped links (size breakdowns)
#   link-roots.tsv                   where the maps' paths are here, and their package index
#   build.log                        the compiler's output
# The unstripped binaries stay in the cache's scratch directory (path printed).
# The working tree is copied as it is (uncommitted edits included, .git, .build and build/
# left out) into the amd64 chroot with rsync, which leaves unchanged files alone, and SwiftPM's
# scratch directory lives in the cache: a rebuild compiles only what changed.
# GPIOD_API=v2 links trixie's libgpiod 2.x (the GPIO backend must compile against it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
source "$here/common.sh"
out=${OPENCARKEY_AARCH64_OUT:-$repo/build/aarch64}
total_start=$(now)

if [[ $(id -u) -ne 0 ]]; then
    echo "aarch64: the cross build needs root (chroot); run it as root or with sudo" >&2
    exit 1
fi
take_lock
export OPENCARKEY_AARCH64_LOCKED=1
t=$(now); "$here/setup.sh"; step_done "setup (cached)" "$t"
trap unmount_all EXIT

scratch=/ock/scratch-gpiod-$GPIOD_API
products=(carkey-agent carkey)
mkdir -p "$out" "$AMD64/ock/src" "$AMD64/ock/out/maps" "$AMD64/ock/repo"

# ---- copy the working tree -----------------------------------------------------------------
t=$(now)
mount_chroot "$AMD64"
mount --bind -o ro "$repo" "$AMD64/ock/repo"; mounted=("$AMD64/ock/repo" "${mounted[@]}")
in_amd64 rsync -a --delete --exclude=/.git --exclude=/.build --exclude=/build --exclude=/.swiftpm \
    /ock/repo/ /ock/src/
umount "$AMD64/ock/repo"; mounted=("${mounted[@]:1}")
step_done "copy working tree" "$t"

# ---- cross build, one product at a time ------------------------------------------------------
# One link map path for both products keeps the build flags identical between the two
# invocations (different flags would make SwiftPM relink everything every run); the map is
# moved aside after each product's link and kept in the cache for runs that do not relink.
sysroot_pc="$SYSROOT/usr/lib/aarch64-linux-gnu/pkgconfig"
flags=(-c release --swift-sdks-path /ock/sdk --swift-sdk "$SDK_ID" --scratch-path "$scratch"
       --pkg-config-path /ock/clibs-bookworm
       --pkg-config-path "$sysroot_pc" --pkg-config-path "$SYSROOT/usr/share/pkgconfig"
       --pkg-config-path "/ock/gpiod-$GPIOD_API"
       --static-swift-stdlib -Xswiftc -static-executable
       -Xlinker -L/ock/mosquitto/lib
       -Xlinker -Map=/ock/out/link.map
       # Size (the target is 15 MB): the same options as make static (scripts/build-static.sh
       # says what each saved); lld folds only functions whose address is never taken.
       -Xswiftc -Osize -Xlinker --icf=safe)
log=$out/build.log; : > "$log"
bin_dir=$scratch/$TRIPLE/release
for product in "${products[@]}"; do
    t=$(now)
    # lld writes a new file and renames it: a new inode means the link ran.
    before=$(stat -c %i.%Y "$AMD64$bin_dir/$product" 2>/dev/null || echo none)
    # Without a kept map the link has to run again to write one.
    [[ -f $AMD64/ock/out/maps/$product.map ]] || rm -f "$AMD64$bin_dir/$product"
    echo "aarch64: swift build --product $product (GPIO: libgpiod $GPIOD_API)"
    set +e +o pipefail
    in_amd64 bash -c "cd /ock/src && swift build ${flags[*]@Q} --product $product" 2>&1 \
        | tee -a "$log" \
        | grep --line-buffered -v \
            -e 'requires at runtime the shared libraries' -e "the use of \`mktemp' is dangerous" \
            -e 'Could not read SDKSettings.json' -e "argument unused during compilation: '-pie'"
    status=${PIPESTATUS[0]}
    set -e -o pipefail
    if [[ $status -ne 0 ]]; then
        echo "aarch64: build of $product failed (log: $log)" >&2
        exit "$status"
    fi
    after=$(stat -c %i.%Y "$AMD64$bin_dir/$product")
    if [[ $after != "$before" && -f $AMD64/ock/out/link.map ]]; then
        mv "$AMD64/ock/out/link.map" "$AMD64/ock/out/maps/$product.map"
    fi
    step_done "build $product" "$t"
done

# ---- the PKCS#11 bridge ----------------------------------------------------------------------
# Dynamically linked against the sysroot's glibc (it loads the board's PKCS#11 module;
# docs/pkcs11-bridge.md), with the same clang that builds libmosquitto; it needs no symbol
# newer than GLIBC_2.34, so it runs on Debian 12 / Raspberry Pi OS 12 (PKCS11BridgeProcessTests).
t=$(now)
in_amd64 /ock/src/tools/pkcs11-bridge/build.sh /ock/out/carkey-pkcs11-bridge /usr/libexec/swift/bin/clang \
    --target="$TRIPLE" --sysroot="$SYSROOT" -fuse-ld=lld -I"$SYSROOT/usr/include/p11-kit-1"
cp "$AMD64/ock/out/carkey-pkcs11-bridge" "$out/carkey-pkcs11-bridge.tmp" && mv "$out/carkey-pkcs11-bridge.tmp" "$out/carkey-pkcs11-bridge"
step_done "build carkey-pkcs11-bridge" "$t"

# ---- strip, check, report -------------------------------------------------------------------
t=$(now)
for product in "${products[@]}"; do
    in_amd64 aarch64-linux-gnu-strip -o "/ock/out/$product" "$bin_dir/$product"
    cp "$AMD64/ock/out/$product" "$out/$product.tmp" && mv "$out/$product.tmp" "$out/$product"
    cp "$AMD64/ock/out/maps/$product.map" "$out/$product.map"
done
step_done "strip" "$t"

# Where the maps' chroot paths are on this machine and which package index describes each tree
# (setup.sh, index_debs): the notices and SBOMs of `make deb` and `make release` read this
# (scripts/licensing/linked.py). Columns: the prefix in the maps, the folder it is here, the
# index, the folder holding the index's copyright files. libmosquitto.a is built from trixie's
# mosquitto source, whose libmosquitto-dev the trixie index names.
{
    printf '%s\t%s\t%s\t%s\n' "$SYSROOT" "$AMD64$SYSROOT" "$INDEX/trixie-arm64.tsv" "$INDEX/trixie-arm64-docs"
    printf '%s\t%s\t%s\t%s\n' /ock/clibs-bookworm/root "$AMD64/ock/clibs-bookworm/root" "$INDEX/clibs-bookworm.tsv" "$INDEX/clibs-bookworm-docs"
    printf '%s\t%s\t%s\t%s\n' "/ock/gpiod-$GPIOD_API/root" "$AMD64/ock/gpiod-$GPIOD_API/root" "$INDEX/gpiod-$GPIOD_API.tsv" "$INDEX/gpiod-$GPIOD_API-docs"
    printf '%s\t%s\t%s\t%s\n' /ock/mosquitto "$AMD64/ock/mosquitto" "$INDEX/trixie-arm64.tsv" "$INDEX/trixie-arm64-docs"
} > "$out/link-roots.tsv"

status=0
for product in "${products[@]}"; do
    description=$(file -b "$out/$product")
    if [[ $description != *"ARM aarch64"* || $description != *"statically linked"* ]]; then
        echo "aarch64: $out/$product is not a static aarch64 executable: $description" >&2
        status=1
    fi
    size=$(stat -c %s "$out/$product")
    unstripped=$(stat -c %s "$AMD64$bin_dir/$product")
    printf 'aarch64: %-13s %9d bytes (%s) stripped, %s unstripped; %s\n' "$product" "$size" \
        "$(numfmt --to=iec-i --suffix=B "$size")" "$(numfmt --to=iec-i --suffix=B "$unstripped")" "${description%%, BuildID*}"
done
description=$(file -b "$out/carkey-pkcs11-bridge")
if [[ $description != *"ARM aarch64"* || $description != *"dynamically linked"* ]]; then
    echo "aarch64: $out/carkey-pkcs11-bridge is not a dynamically linked aarch64 executable: $description" >&2
    status=1
fi
echo "aarch64: outputs in $out (link maps: $out/*.map; unstripped: $AMD64$bin_dir)"
echo "aarch64: step times: $(IFS=';'; echo "${log_step_times[*]}")"
step_done "total" "$total_start"
exit "$status"

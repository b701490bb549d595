#!/usr/bin/env bash
# Links carkey-agent and carkey again from this kit's objects (see README).
# Usage: ./link.sh [--gpiod-lib DIR] [--swiftc PATH] [--sdk DIR] [--strip PATH] OUT_DIR [PRODUCT...]
#   --gpiod-lib DIR  a folder with your libgpiod.a, searched before the system's (or the kit's)
#   --swiftc PATH    the Swift compiler driver (default: swiftc on PATH)
#   --sdk DIR        the sysroot of the aarch64 Swift SDK (an aarch64 kit only; see README)
#   --strip PATH     the strip for the programs' architecture (default: kit.conf's)
#   PRODUCT          carkey-agent and/or carkey (default: both)
set -euo pipefail
kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
swiftc=swiftc
extra=()
sdk=
STRIP=strip NEEDS_SDK=0
# shellcheck source=/dev/null
[[ ! -f $kit/kit.conf ]] || source "$kit/kit.conf"
strip_tool=$STRIP
while [[ $# -gt 0 ]]; do
    case $1 in
        --gpiod-lib) extra+=("-L$(cd "${2:?}" && pwd)"); shift 2 ;;
        --swiftc) swiftc=${2:?}; shift 2 ;;
        --sdk) sdk=$(cd "${2:?}" && pwd); shift 2 ;;
        --strip) strip_tool=${2:?}; shift 2 ;;
        -*) echo "link.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
out=${1:?usage: ./link.sh [--gpiod-lib DIR] [--swiftc PATH] [--sdk DIR] [--strip PATH] OUT_DIR [PRODUCT...]}
[[ $NEEDS_SDK != 1 || -n $sdk ]] || { echo "link.sh: this kit links for aarch64: --sdk names the SDK's sysroot (README)" >&2; exit 2; }
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
products=("$@")
[[ ${#products[@]} -gt 0 ]] || products=(carkey-agent carkey)
# The object lists name @KIT@; the linker reads them through a copy with this kit's path.
lists=$(mktemp -d)
trap 'rm -rf "$lists"' EXIT
for product in "${products[@]}"; do
    [[ -f $kit/link-args/$product ]] || { echo "link.sh: no product $product in this kit" >&2; exit 2; }
    sed "s|@KIT@|$kit|g" "$kit/objects/$product.objects" > "$lists/$product.objects"
    args=()
    while IFS= read -r arg; do
        case $arg in
            @SWIFTC@) args+=("$swiftc" "${extra[@]}") ;;
            @@KIT@/objects/*.objects) args+=("@$lists/$product.objects") ;;
            *) arg=${arg//@KIT@/$kit}; arg=${arg//@SDK@/$sdk}; args+=("${arg//@OUT@/$out}") ;;
        esac
    done < "$kit/link-args/$product"
    echo "link.sh: linking $out/$product"
    "${args[@]}" 2> "$out/$product.log" || { cat "$out/$product.log" >&2; exit 1; }
    "$strip_tool" "$out/$product"
done

#!/usr/bin/env bash
# Builds carkey-pkcs11-bridge: build.sh OUTPUT CC [FLAG...]. The flags every build uses live
# here (the host build from the Makefile, the aarch64 one from scripts/aarch64/build.sh with
# the chroot's clang, --target and --sysroot); the caller adds the compiler and the include
# folder of p11-kit's pkcs11.h. Hardened as Debian builds its packages (lintian checks it).
set -euo pipefail
out=${1:?usage: build.sh OUTPUT CC [FLAG...]}
cc=${2:?usage: build.sh OUTPUT CC [FLAG...]}
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$(dirname "$out")"
"$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIE -pie \
    -Wl,-z,relro -Wl,-z,now -s "$@" -o "$out.tmp" "$here"/*.c
mv "$out.tmp" "$out"

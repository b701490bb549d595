# Shared by scripts/aarch64/*.sh (sourced, not run): where the cache lives, the pinned versions,
# locking, chroot mounts and step timing. Every name here is read by more than one script.

# The cache: a debootstrapped trixie amd64 chroot, unpacked arm64 packages and what is built
# from them. Kept outside the repository so `make clean` and fresh checkouts reuse it.
CACHE=${OPENCARKEY_AARCH64_CACHE:-/var/cache/opencarkey-aarch64}
MIRROR=${OPENCARKEY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Pinned so the stamps can name what they depend on without asking apt (a warm run never
# touches the network). Debian trixie's swiftlang; bump together with check-swift60.sh.
SWIFTLANG_VERSION=${SWIFTLANG_VERSION:-6.0.3-2}
# v1: libgpiod 1.6 from bookworm (the API of Raspberry Pi OS 12 and Debian 12).
# v2: trixie's libgpiod 2.x (needs a GPIO backend that compiles against it).
GPIOD_API=${GPIOD_API:-v1}
case $GPIOD_API in v1|v2) ;; *) echo "aarch64: GPIOD_API must be v1 or v2, not '$GPIOD_API'" >&2; exit 2;; esac

AMD64=$CACHE/amd64          # trixie amd64 chroot: swiftlang as the cross compiler, cmake
ARM64=$CACHE/arm64          # trixie arm64 packages, unpacked: source of the SDK sysroot
INDEX=$CACHE/index          # which package each linked archive came from (setup.sh, index_debs)
STAMPS=$CACHE/stamps
LOGS=$CACHE/logs
# Paths as seen inside the amd64 chroot (all under /ock).
SDK_ID=opencarkey-trixie-aarch64
SDK_BUNDLE=/ock/sdk/$SDK_ID.artifactbundle
SYSROOT=$SDK_BUNDLE/$SDK_ID/aarch64-unknown-linux-gnu/sysroot
TRIPLE=aarch64-unknown-linux-gnu

log_step_times=()
now() { date +%s.%N; }
# step_done NAME START: records and prints how long a step took.
step_done() {
    local took
    took=$(awk -v a="$2" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
    log_step_times+=("$1 ${took}s")
    echo "aarch64: $1 took ${took}s"
}

# One run at a time: the test suite and `make static-aarch64` may start together.
take_lock() {
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.lock"
    if ! flock -n 9; then
        echo "aarch64: waiting for another run holding $CACHE/.lock" >&2
        flock 9
    fi
}

# Bind mounts a chroot needs (/proc for swift and apt, /dev for /dev/null and ptys); undone on
# exit. Tracked so cleanup unmounts exactly what this run mounted.
mounted=()
mount_chroot() {
    local root=$1 fs
    for fs in proc dev dev/pts; do
        mkdir -p "$root/$fs"
        if ! mountpoint -q "$root/$fs"; then
            mount --bind "/$fs" "$root/$fs"
            mounted=("$root/$fs" "${mounted[@]}")
        fi
    done
}
unmount_all() {
    local m
    for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    mounted=()
}

# Removes a tree that may be a half-made chroot. Refuses while anything is mounted below it:
# an `rm -rf` through a bind-mounted /dev would wipe the host's.
safe_rm() {
    local dir=$1 m
    [[ -e $dir ]] || return 0
    for m in $(findmnt -rn -o TARGET | grep -F "$dir/" | sort -r); do umount "$m" 2>/dev/null || umount -l "$m"; done
    if findmnt -rn -o TARGET | grep -qF "$dir/"; then
        echo "aarch64: still mounted under $dir, not removing it" >&2
        return 1
    fi
    rm -rf --one-file-system "$dir"
}

in_amd64() { chroot "$AMD64" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

# ---- Debian packages for arm64, downloaded by this machine's apt and unpacked, not installed --
# (setup.sh: the SDK's sources; scripts/arm64-vm/setup.sh: the arm64 lanes' guest root.)
# host_apt NAME SUITE: writes an apt configuration for arm64 packages of SUITE, kept apart in
# $CACHE/apt/NAME (its own lists, archives and empty status; the host's sources and
# preferences are not read, its /etc/apt/apt.conf.d is, so a proxy set there applies), and
# prints its path for APT_CONFIG.
host_apt() {
    local root=$CACHE/apt/$1 suite=$2
    mkdir -p "$root/etc/apt.conf.d" "$root/etc/preferences.d" "$root/etc/sources.list.d" \
        "$root/lists/partial" "$root/archives/partial" "$root/cache"
    : > "$root/status"
    printf 'deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' "$MIRROR" "$suite" \
        > "$root/etc/sources.list"
    cat > "$root/apt.conf" <<CONF
Dir::Etc "$root/etc";
Dir::State "$root";
Dir::State::status "$root/status";
Dir::State::Lists "$root/lists";
Dir::Cache "$root/cache";
Dir::Cache::archives "$root/archives";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Install-Recommends "false";
APT::Install-Suggests "false";
APT::Sandbox::User "root";
Acquire::Languages "none";
Debug::NoLocking "true";
CONF
    echo "$root/apt.conf"
}
# unpack_debs DIR DEB...: dpkg-deb -x, two at a time (swiftlang alone is 400 MB of xz).
unpack_debs() {
    local dir=$1; shift
    mkdir -p "$dir"
    printf '%s\0' "$@" | xargs -0 -r -n 1 -P 2 sh -c 'dpkg-deb -x "$1" "$0"' "$dir"
}
# merge_usr DIR: merged /usr in an unpacked tree (/bin, /sbin, /lib links into usr/); a package
# that still ships files under /lib (or /bin, /sbin) has them moved to /usr first.
merge_usr() {
    local root=$1 d
    for d in bin sbin lib; do
        if [[ -d $root/$d && ! -L $root/$d ]]; then
            mkdir -p "$root/usr/$d" && cp -a "$root/$d/." "$root/usr/$d/" && rm -rf --one-file-system "${root:?}/$d"
        fi
        [[ -L $root/$d ]] || ln -s "usr/$d" "$root/$d"
    done
}

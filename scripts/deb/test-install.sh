#!/usr/bin/env bash
# Installs, upgrades, removes and purges carkey-agent in a fresh Debian 12 chroot and checks
# each step. Run as root.
#
#   scripts/deb/test-install.sh [--arch amd64|arm64] [--systemd] DEB UPGRADE_DEB
#
# --systemd uses the base with the systemd package installed (still not running), where the
# postinst makes the user with systemd-sysusers; without it the adduser fallback runs.
# UPGRADE_DEB is the same package with a higher version (build.sh --version 0.1.0+test1).
# The chroot is a copy of the cached base (scripts/deb/chroot.sh), deleted afterwards
# (OPENCARKEY_DEB_KEEP=1 keeps it for a look). No systemd and no udev run in it: the package
# must install without them (the unit is enabled by links only). arm64 runs under qemu-user
# through binfmt_misc.
#
# Prints "ok: ..." per check and one "FAIL: ..." line (exit 1) at the first check that fails;
# the last line is "test-install: passed (...)" with the time of each phase.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
arch=amd64
flavour=
while [[ ${1:-} == --* ]]; do
    case $1 in
    --arch) arch=${2:?}; shift 2 ;;
    --systemd) flavour=systemd; shift ;;
    *) echo "test-install: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ $# -eq 2 ]] || { echo "usage: $0 [--arch A] [--systemd] DEB UPGRADE_DEB" >&2; exit 2; }
deb=$(realpath "$1")
upgrade=$(realpath "$2")
[[ $(id -u) -eq 0 ]] || { echo "test-install: needs root (chroot, dpkg)" >&2; exit 2; }

fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }

version_of() { dpkg-deb -f "$1" Version; }
new_version=$(version_of "$upgrade")
old_version=$(version_of "$deb")
dpkg --compare-versions "$new_version" gt "$old_version" ||
    fail "the upgrade package's version $new_version is not higher than $old_version"
upstream=${old_version%%[+~-]*}

timer=$(date +%s%N)
phases=
phase_done() { # NAME
    local now
    now=$(date +%s%N)
    phases+="${phases:+, }$1 $(((now - timer) / 1000000)) ms"
    timer=$now
}

work=$(mktemp -d "${TMPDIR:-/tmp}/opencarkey-deb-test.XXXXXX")
root=$work/root
cleanup() {
    umount "$root/dev/pts" 2>/dev/null || true
    umount "$root/proc" 2>/dev/null || true
    if [[ ${OPENCARKEY_DEB_KEEP:-0} == 1 ]]; then
        echo "test-install: chroot kept in $root" >&2
    elif findmnt -rn -o TARGET | grep -q "^$work/"; then
        echo "test-install: something is still mounted under $work, not deleting it" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

"$here/chroot.sh" copy "$arch" "$root" $flavour
mount -t proc proc "$root/proc"
# A private devpts instance: the agent's console opens a pseudo-terminal (/dev/ptmx in the
# chroot resolves to the devpts mounted beside it).
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
phase_done copy

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }
as_user() { local user=$1; shift; in_root runuser -u "$user" -- "$@"; }

dpkg_step() { # WHAT ARGS...; runs dpkg in the chroot, shows its output on failure
    local what=$1 output
    shift
    if ! output=$(in_root dpkg "$@" 2>&1); then
        echo "$output"
        fail "$what: dpkg $* failed"
    fi
    # Warnings from the maintainer scripts or dpkg are shown; they do not fail the test.
    grep -i 'warn' <<<"$output" | sed 's/^/  (dpkg) /' || true
    ok "$what"
}

status_is() { # EXPECTED
    local status
    status=$(in_root dpkg-query -W -f='${Status} ${Version}' carkey-agent 2>/dev/null || echo "not-installed")
    [[ $status == "$1" ]] || fail "dpkg status is \"$status\", expected \"$1\""
    ok "dpkg status: $1"
}

mode_is() { # PATH "MODE USER GROUP"
    local got
    got=$(in_root stat -c '%a %U %G' "$1" 2>/dev/null) || fail "$1 is missing"
    [[ $got == "$2" ]] || fail "$1 is $got, expected $2"
    ok "$1 $2"
}

absent() { # PATH
    in_root test ! -e "$1" -a ! -L "$1" || fail "$1 is still there"
    ok "$1 absent"
}

file_is() { # PATH CONTENT
    local got
    got=$(in_root cat "$1" 2>/dev/null) || fail "$1 is missing"
    [[ $got == "$2" ]] || fail "$1 holds \"$got\", expected \"$2\""
    ok "$1 holds what was written"
}

check_user() {
    local entry home shell uid
    entry=$(in_root getent passwd carkey) || fail "no user carkey"
    IFS=: read -r _ _ uid _ _ home shell <<<"$entry"
    [[ $uid -lt 1000 ]] || fail "carkey has UID $uid, not a system UID"
    [[ $home == /var/lib/opencarkey ]] || fail "carkey's home is $home"
    [[ $shell == */nologin ]] || fail "carkey's shell is $shell"
    # Every group the sysusers file adds the user to (m lines).
    local groups group
    groups=$(in_root id -nG carkey)
    for group in carkey $(in_root awk '$1 == "m" && $2 == "carkey" { print $3 }' /usr/lib/sysusers.d/carkey-agent.conf); do
        [[ " $groups " == *" $group "* ]] || fail "carkey is not in group $group (in: $groups)"
    done
    ok "user carkey (UID $uid, groups: $groups)"
    carkey_uid=$uid
}

check_layout() {
    mode_is /var/lib/opencarkey "700 carkey carkey"
    mode_is /etc/opencarkey "770 root carkey"
    mode_is /usr/bin/carkey-agent "755 root root"
    mode_is /usr/bin/carkey "755 root root"
    mode_is /lib/systemd/system/carkey-agent.service "644 root root"
    mode_is /lib/udev/rules.d/60-opencarkey.rules "644 root root"
    mode_is /usr/lib/sysusers.d/carkey-agent.conf "644 root root"
    local overrides
    overrides=$(in_root dpkg-statoverride --list)
    grep -qx 'root carkey 770 /etc/opencarkey' <<<"$overrides" || fail "no statoverride for /etc/opencarkey: $overrides"
    grep -qx 'root carkey 640 /etc/opencarkey/agent.json' <<<"$overrides" || fail "no statoverride for agent.json: $overrides"
    ok "statoverrides registered"
    in_root dpkg-query -W -f='${Conffiles}\n' carkey-agent | grep -q '^ /etc/opencarkey/agent.json ' ||
        fail "agent.json is not a registered conffile"
    ok "agent.json is a conffile"
    local link=/etc/systemd/system/multi-user.target.wants/carkey-agent.service target
    target=$(in_root readlink "$link") || fail "the unit is not enabled ($link missing)"
    [[ $target == /lib/systemd/system/carkey-agent.service ]] || fail "$link points to $target"
    ok "unit enabled ($link)"
    local printed
    printed=$(in_root /usr/bin/carkey-agent --version) || fail "carkey-agent --version failed in the chroot"
    [[ $printed == "carkey-agent $upstream" ]] || fail "carkey-agent --version printed \"$printed\""
    printed=$(as_user carkey /usr/bin/carkey --version) || fail "carkey --version failed in the chroot"
    [[ $printed == "carkey $upstream" ]] || fail "carkey --version printed \"$printed\""
    ok "carkey-agent and carkey --version print $upstream (carkey run as the user carkey)"
}

# --- install -----------------------------------------------------------------------------
if in_root sh -c 'command -v systemd-sysusers' >/dev/null; then users_by=systemd-sysusers; else users_by=adduser; fi
expected_by=adduser
[[ $flavour == systemd ]] && expected_by=systemd-sysusers
[[ $users_by == "$expected_by" ]] || fail "the chroot's users would be made by $users_by, not $expected_by"
ok "the postinst will make the user with $users_by"
cp "$deb" "$root/tmp/first.deb"
cp "$upgrade" "$root/tmp/upgrade.deb"
dpkg_step "install $old_version" -i /tmp/first.deb
status_is "install ok installed $old_version"
check_user
first_uid=$carkey_uid
check_layout
mode_is /etc/opencarkey/agent.json "640 root carkey"
# What the agent needs at run time, as its own user: read the config, write the state, and
# replace agent.json the way an over-the-air config change does (temp file + rename).
as_user carkey cat /etc/opencarkey/agent.json >/dev/null || fail "carkey cannot read agent.json"
ok "carkey reads agent.json"
# The agent itself, as the unit runs it (user carkey, the packaged config; --simulate for the
# hardware), for a few seconds: it must start and make its state, then stop on SIGTERM with 0.
set +e
agent_output=$(as_user carkey timeout --preserve-status -s TERM 5 /usr/bin/carkey-agent run \
    --config /etc/opencarkey/agent.json --state-dir /var/lib/opencarkey --simulate 2>&1)
agent_status=$?
set -e
[[ $agent_status -eq 0 ]] || { echo "$agent_output" | tail -n 5; fail "carkey-agent run as carkey exited with $agent_status"; }
mode_is /var/lib/opencarkey/car-identity.pub "644 carkey carkey"
identity=$(in_root cat /var/lib/opencarkey/car-identity.pub)
ok "carkey-agent ran 5 s as carkey with the packaged config and made its identity"
as_user carkey sh -c 'echo "paired keys live here" > /var/lib/opencarkey/marker' ||
    fail "carkey cannot write into /var/lib/opencarkey"
ok "carkey writes into /var/lib/opencarkey"
ota='{ "vehicleID": "OCK-OTA-0002" }'
as_user carkey sh -c "cp /etc/opencarkey/agent.json /etc/opencarkey/agent.json.last-good && printf '%s' '$ota' > /etc/opencarkey/agent.json.tmp-1 && chmod 0640 /etc/opencarkey/agent.json.tmp-1 && mv /etc/opencarkey/agent.json.tmp-1 /etc/opencarkey/agent.json" ||
    fail "carkey cannot replace agent.json (over-the-air config)"
ok "carkey replaces agent.json by rename"
if as_user nobody cat /etc/opencarkey/agent.json >/dev/null 2>&1; then fail "other users can read agent.json"; fi
if as_user nobody ls /var/lib/opencarkey >/dev/null 2>&1; then fail "other users can list /var/lib/opencarkey"; fi
ok "other users read neither the config nor the state"
phase_done install

# --- upgrade -----------------------------------------------------------------------------
dpkg_step "upgrade to $new_version" -i /tmp/upgrade.deb
status_is "install ok installed $new_version"
check_user
[[ $carkey_uid == "$first_uid" ]] || fail "carkey's UID changed from $first_uid to $carkey_uid"
check_layout
file_is /var/lib/opencarkey/marker "paired keys live here"
mode_is /var/lib/opencarkey/marker "644 carkey carkey"
file_is /var/lib/opencarkey/car-identity.pub "$identity"
file_is /etc/opencarkey/agent.json "$ota"
phase_done upgrade

# --- remove ------------------------------------------------------------------------------
dpkg_step "remove" -r carkey-agent
status_is "deinstall ok config-files $new_version"
absent /usr/bin/carkey-agent
absent /usr/bin/carkey
absent /lib/systemd/system/carkey-agent.service
file_is /var/lib/opencarkey/marker "paired keys live here"
file_is /var/lib/opencarkey/car-identity.pub "$identity"
mode_is /var/lib/opencarkey "700 carkey carkey"
file_is /etc/opencarkey/agent.json "$ota"
phase_done remove

# --- purge -------------------------------------------------------------------------------
# Decided in postrm: purge deletes the state and the config, keeps the user.
dpkg_step "purge" -P carkey-agent
status_is "not-installed"
absent /var/lib/opencarkey
absent /etc/opencarkey
absent /etc/systemd/system/multi-user.target.wants/carkey-agent.service
if in_root dpkg-statoverride --list | grep -q opencarkey; then fail "statoverrides left after purge"; fi
ok "no statoverrides left"
in_root getent passwd carkey >/dev/null || fail "purge removed the user carkey (it should stay)"
ok "user carkey kept"
phase_done purge

# --- install again after purge -------------------------------------------------------------
dpkg_step "install $old_version after purge" -i /tmp/first.deb
check_user
[[ $carkey_uid == "$first_uid" ]] || fail "carkey's UID changed from $first_uid to $carkey_uid"
check_layout
mode_is /etc/opencarkey/agent.json "640 root carkey"
absent /var/lib/opencarkey/marker
phase_done reinstall

echo "test-install: passed ($arch, users by $users_by, $old_version -> $new_version; $phases)"

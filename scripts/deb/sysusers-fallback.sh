#!/usr/bin/env bash
# Turns a sysusers.d file into the calls of the postinst's fallback functions (add_group,
# add_user, add_member: addgroup/adduser) that run when systemd-sysusers is absent (a
# chroot, a board without systemd). The sysusers.d file stays
# the one description of the user and groups; this runs at build time, so a line it cannot
# translate fails the build instead of a user's install.
#
#   scripts/deb/sysusers-fallback.sh FILE   prints POSIX sh lines on stdout
#
# Supported (sysusers.d(5)): "g NAME ID", "u NAME ID GECOS HOME [SHELL]", "m USER GROUP",
# comments and blank lines. ID must be "-" (allocated from the system range) or a number.
# Not supported, so refused: "r" (ID ranges) and IDs given as "uid:gid" or a path.
# The functions are idempotent (they skip what already exists): the postinst runs again on
# each upgrade and reconfigure.
set -euo pipefail

file=${1:?usage: $0 SYSUSERS_FILE}
number=0

fail() { echo "sysusers-fallback: $file:$number: $*" >&2; exit 1; }

# Splits one line into the global array `fields`: whitespace separated, a field may be in
# double quotes (the GECOS usually is). No escapes: sysusers files of this project need none.
split_fields() {
    local rest=$1
    fields=()
    while [[ -n $rest ]]; do
        rest=${rest#"${rest%%[![:space:]]*}"}
        [[ -z $rest ]] && break
        if [[ $rest == \"* ]]; then
            rest=${rest#\"}
            [[ $rest == *\"* ]] || fail "unterminated quote"
            fields+=("${rest%%\"*}")
            rest=${rest#*\"}
        else
            fields+=("${rest%%[[:space:]]*}")
            rest=${rest#"${fields[-1]}"}
        fi
    done
}

# A value safe to put inside single quotes in the generated script.
quote() {
    [[ $1 != *"'"* ]] || fail "a single quote in \"$1\" is not supported"
    printf "'%s'" "$1"
}

check_name() {
    [[ $1 =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || fail "not a portable user or group name: \"$1\""
}

check_id() {
    case $1 in
    -) ;;
    *[!0-9]*) fail "ID \"$1\" is not supported (only - or a number)" ;;
    esac
}

while IFS= read -r line || [[ -n $line ]]; do
    number=$((number + 1))
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    split_fields "$line"
    case ${fields[0]} in
    g)
        [[ ${#fields[@]} -ge 2 ]] || fail "g needs a name"
        check_name "${fields[1]}"
        check_id "${fields[2]:--}"
        printf 'add_group %s %s\n' "$(quote "${fields[1]}")" "$(quote "${fields[2]:--}")"
        ;;
    u)
        [[ ${#fields[@]} -ge 2 ]] || fail "u needs a name"
        name=${fields[1]} id=${fields[2]:--} gecos=${fields[3]:--} home=${fields[4]:--} shell=${fields[5]:--}
        check_name "$name"
        check_id "$id"
        [[ $gecos == - ]] && gecos=$name
        [[ $home == - ]] && home=/
        [[ $shell == - ]] && shell=/usr/sbin/nologin
        printf 'add_user %s %s %s %s %s\n' "$(quote "$name")" "$(quote "$id")" "$(quote "$gecos")" \
            "$(quote "$home")" "$(quote "$shell")"
        ;;
    m)
        [[ ${#fields[@]} -eq 3 ]] || fail "m needs a user and a group"
        check_name "${fields[1]}"
        check_name "${fields[2]}"
        printf 'add_member %s %s\n' "$(quote "${fields[1]}")" "$(quote "${fields[2]}")"
        ;;
    *)
        fail "line type \"${fields[0]}\" is not supported"
        ;;
    esac
done <"$file"

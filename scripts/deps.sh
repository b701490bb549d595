#!/usr/bin/env bash
# Install the Debian packages OpenCarKey builds and tests against, and nothing else.
# Silent when everything is already installed; otherwise one line naming what it installs.
# Usage: scripts/deps.sh [extra-package ...]   (as root, or a user with sudo)
set -euo pipefail

packages=(
    libssl-dev          # COpenSSL: crypto core, TLS for MQTT
    libmosquitto-dev    # CMosquitto: MQTT client
    libgpiod-dev        # CGPIOD: lock actuators (libgpiod v1.6 API)
    libbluetooth-dev    # CBluetooth: BLE advertising via BlueZ
    libsqlite3-dev      # CSQLite: durable outbound queue
    pkg-config          # SwiftPM resolves the system libraries through it
    mosquitto           # MQTT broker for integration tests
    mosquitto-clients   # mosquitto_pub/mosquitto_sub: the cloud tests and the benchmark use them
    openssl             # the openssl CLI: the TLS tests make a throw-away CA with it
    "$@"
)

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    [[ $status == installed ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "deps: need root or sudo to install: ${missing[*]}" >&2
    exit 1
fi

echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >/dev/null
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

SUMMARY = "OpenCarKey Gateway: the agent and what it needs on the board, without bluetoothd"
DESCRIPTION = "carkey-agent owns the Bluetooth adapter through the kernel's management \
               socket and serves its own GATT key service; it refuses to run next to bluetoothd, \
               so this group installs no bluez5 (the package that carries bluetoothd)."
HOMEPAGE = "https://github.com/opencarkey/opencarkey-gateway"
BUGTRACKER = "https://github.com/opencarkey/opencarkey-gateway/issues"
SECTION = "console/network"

# Kernel module packages are built per machine, so the group is too (as packagegroup-base).
PACKAGE_ARCH = "${MACHINE_ARCH}"

inherit packagegroup

RDEPENDS:${PN} = "carkey-agent"

# Kernel drivers for the Bluetooth controller and spidev, when the kernel builds them as
# modules (opencarkey.cfg); a built-in driver has no package and the recommendation is dropped.
RRECOMMENDS:${PN} = "\
    kernel-module-bluetooth \
    kernel-module-btusb \
    kernel-module-hci-uart \
    kernel-module-spidev \
"

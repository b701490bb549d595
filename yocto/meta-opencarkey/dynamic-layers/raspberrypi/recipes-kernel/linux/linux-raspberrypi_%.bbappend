# Adds the kernel options carkey-agent needs to meta-raspberrypi's kernel; linux-raspberrypi
# merges .cfg fragments from SRC_URI into its defconfig (KCONFIG_MODE = "--alldefconfig").
# Only for Raspberry Pi machines (their MACHINEOVERRIDES contain "rpi").
FILESEXTRAPATHS:prepend:rpi := "${THISDIR}/files:"
SRC_URI:append:rpi = " file://opencarkey.cfg"

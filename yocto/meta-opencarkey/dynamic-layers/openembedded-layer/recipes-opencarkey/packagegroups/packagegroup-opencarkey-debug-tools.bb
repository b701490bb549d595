SUMMARY = "OpenCarKey Gateway bring-up tools: btmgmt and the libgpiod tools, no bluetoothd"
DESCRIPTION = "For the bench, not the car: btmgmt to look at the controller through the same \
               management socket the agent uses, gpiodetect/gpioinfo/gpioget for the wiring. \
               Built only when meta-oe (libgpiod) is in the build."
HOMEPAGE = "https://github.com/opencarkey/opencarkey-gateway"
BUGTRACKER = "https://github.com/opencarkey/opencarkey-gateway/issues"
SECTION = "console/network"

inherit packagegroup

# bluez5-noinst-tools carries btmgmt but not bluetoothd; opencarkey-image's PACKAGE_EXCLUDE
# stops the build if it ever pulled bluez5 in.
RDEPENDS:${PN} = "\
    bluez5-noinst-tools \
    libgpiod-tools \
"

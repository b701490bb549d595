SUMMARY = "OpenCarKey Gateway image: systemd, carkey-agent, no bluetoothd"
DESCRIPTION = "A small systemd image with carkey-agent. It has no bluetoothd: the agent drives \
               the Bluetooth controller through the kernel's management socket and refuses to \
               start next to bluetoothd."
HOMEPAGE = "https://github.com/opencarkey/opencarkey-gateway"
BUGTRACKER = "https://github.com/opencarkey/opencarkey-gateway/issues"
SECTION = "images"
LICENSE = "MIT"
# An image is no upstream product of its own; CVEs are looked up per recipe it contains.
CVE_PRODUCT = ""

# Like core-image-minimal: core-image-base would add packagegroup-base-bluetooth, which
# RDEPENDS on bluez5 and so installs and enables bluetoothd.
IMAGE_INSTALL = "\
    packagegroup-core-boot \
    packagegroup-opencarkey \
    ${OPENCARKEY_MACHINE_EXTRAS} \
    ${CORE_IMAGE_EXTRA_INSTALL} \
"

# The machine's firmware and modules (on a Pi: the Bluetooth controller's .hcd patch files,
# kernel-modules, udev-rules-rpi). core-image-base gets these through packagegroup-base.
OPENCARKEY_MACHINE_EXTRAS ?= "${MACHINE_EXTRA_RRECOMMENDS}"

IMAGE_LINGUAS = ""

REQUIRED_DISTRO_FEATURES = "systemd"

inherit core-image features_check

# bluetoothd must not be on the car: the agent refuses to start next to it. PACKAGE_EXCLUDE
# turns anything that still depends on bluez5 (or pi-bluetooth, whose hciuart service runs
# bluez5's hciattach) into a build error instead of a silent install.
PACKAGE_EXCLUDE += "bluez5 pi-bluetooth"

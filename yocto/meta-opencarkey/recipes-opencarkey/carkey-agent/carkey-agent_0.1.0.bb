SUMMARY = "OpenCarKey Gateway agent: phone-as-car-key, car side"
DESCRIPTION = "carkey-agent and carkey as released static binaries, with the systemd unit, \
               udev rules, system user and example configuration from the release's board/ folder."
# Placeholder addresses until the project publishes (README.md, "Release tarball").
HOMEPAGE = "https://github.com/opencarkey/opencarkey-gateway"
BUGTRACKER = "https://github.com/opencarkey/opencarkey-gateway/issues"
SECTION = "console/network"
# The project's own licence; the release tarball carries LICENSE at its top. The libraries
# linked into the static binaries are listed in the tarball's THIRD-PARTY-NOTICES.txt.
LICENSE = "Apache-2.0"
LIC_FILES_CHKSUM = "file://LICENSE;md5=3b83ef96387f14655fc854ddc3c6bd57"
# Vendor:product for CVE look-ups of the agent itself. The libraries linked into the static
# binaries (OpenSSL, SQLite, libmosquitto, ...) are not tracked through this recipe.
CVE_PRODUCT = "opencarkey:carkey-agent"

# Prebuilt: building Swift inside bitbake needs meta-swift; this recipe installs the static
# release binaries instead (README.md, "Why a prebuilt binary").
require carkey-agent-release.inc

OPENCARKEY_RELEASE_ARCH = "${TARGET_ARCH}"
SRC_URI = "${OPENCARKEY_RELEASE_URL}/v${PV}/${BP}-${OPENCARKEY_RELEASE_ARCH}.tar.gz;name=${OPENCARKEY_RELEASE_ARCH}"

# Release tarballs exist for these two only (make static, make static-aarch64).
COMPATIBLE_HOST = "(aarch64|x86_64).*-linux"

inherit systemd useradd

# The binaries are prebuilt: nothing to configure or compile. carkey-agent and carkey are static;
# carkey-pkcs11-bridge needs the image's glibc (package QA finds that dependency itself).
do_configure[noexec] = "1"
do_compile[noexec] = "1"
# No DEPENDS for the key vaults: the TPM 2.0 vault speaks the TPM's command protocol itself
# (no tpm2-tss at build or run time), and the PKCS#11 header is needed only where the binaries
# are built; the agent dlopens the configured PKCS#11 module. The module is the product's
# choice (tpm2-pkcs11, a secure element vendor's), added to the image with the config naming it.

# The unit runs the agent as carkey (board/systemd/carkey-agent.service); gpio and spi own the
# GPIO and spidev nodes through board/udev/60-opencarkey.rules, dialout the serial consoles, tss
# the kernel's TPM resource manager /dev/tpmrm0 (the "tpm2" key vault; tpm2-tss makes the same group,
# and useradd leaves a group that exists alone).
# The same user is described for systemd-sysusers in board/systemd/carkey-agent.sysusers;
# useradd makes it at rootfs time so the image's /etc/passwd has it before first boot.
USERADD_PACKAGES = "${PN}"
GROUPADD_PARAM:${PN} = "--system gpio; --system spi; --system tss"
USERADD_PARAM:${PN} = "--system --home-dir ${localstatedir}/lib/opencarkey --no-create-home \
                       --shell ${base_sbindir}/nologin --user-group --groups gpio,spi,dialout,tss carkey"

SYSTEMD_SERVICE:${PN} = "carkey-agent.service"
SYSTEMD_AUTO_ENABLE ?= "enable"

do_install() {
    install -d ${D}${bindir}
    install -m 0755 ${S}/bin/carkey-agent ${D}${bindir}/carkey-agent
    install -m 0755 ${S}/bin/carkey ${D}${bindir}/carkey
    # The PKCS#11 vault's helper: dynamically linked against glibc 2.34 or newer, it loads the
    # configured module in its own process (docs/pkcs11-bridge.md); the agent looks for it here.
    install -d ${D}${libexecdir}/opencarkey
    install -m 0755 ${S}/libexec/opencarkey/carkey-pkcs11-bridge ${D}${libexecdir}/opencarkey/carkey-pkcs11-bridge

    install -d ${D}${systemd_system_unitdir}
    install -m 0644 ${S}/board/systemd/carkey-agent.service ${D}${systemd_system_unitdir}/carkey-agent.service

    install -d ${D}${nonarch_libdir}/sysusers.d
    install -m 0644 ${S}/board/systemd/carkey-agent.sysusers ${D}${nonarch_libdir}/sysusers.d/carkey-agent.conf

    install -d ${D}${nonarch_base_libdir}/udev/rules.d
    install -m 0644 ${S}/board/udev/60-opencarkey.rules ${D}${nonarch_base_libdir}/udev/rules.d/60-opencarkey.rules

    # OTA configuration rewrites agent.json, so the folder belongs to the agent's user. The
    # example describes the simulated car and is not the live file: a product adds agent.json.
    install -d -m 0700 -o carkey -g carkey ${D}${sysconfdir}/opencarkey
    install -m 0644 ${S}/board/agent.example.json ${D}${sysconfdir}/opencarkey/agent.example.json

    # StateDirectory= creates it at start as well; shipping it gives a read-only rootfs the mode.
    install -d -m 0700 -o carkey -g carkey ${D}${localstatedir}/lib/opencarkey
}

FILES:${PN} += "\
    ${nonarch_libdir}/sysusers.d/carkey-agent.conf \
    ${nonarch_base_libdir}/udev/rules.d/60-opencarkey.rules \
    ${localstatedir}/lib/opencarkey \
"

# Both QA checks concern how OE builds binaries, and these were built by the release:
# already-stripped: the release strips them (20 MB static); there is no debug data to split.
# ldflags: SwiftPM (and tools/pkcs11-bridge/build.sh for the bridge) links them, not OE's
# LDFLAGS; a static-pie build has no GNU_HASH section.
# nooelint: oelint.vars.insaneskip
INSANE_SKIP:${PN} += "already-stripped ldflags"

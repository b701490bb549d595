# Parsed only when meta-tpm (meta-security, collection "tpm-layer", which has the tpm2-tss
# recipe) is in the build. The TPM 2.0 key vault (agent.json vault "tpm2", issue 18) dlopens
# these at run time; recommended, not required: the agent is static and starts without them
# (a board without a TPM keeps the file or PKCS#11 vault), and an image can drop them with
# BAD_RECOMMENDATIONS.
#   libtss2              libtss2-esys.so.0, libtss2-tctildr.so.0, libtss2-rc.so.0
#   libtss2-mu           libtss2-mu.so.0 (marshalling)
#   libtss2-tcti-device  the TCTI the loader opens for "device:/dev/tpmrm0"
#   tpm2-tss             its udev rules give /dev/tpmrm0 to the tss group
RRECOMMENDS:${PN} += "\
    libtss2 \
    libtss2-mu \
    libtss2-tcti-device \
    tpm2-tss \
"

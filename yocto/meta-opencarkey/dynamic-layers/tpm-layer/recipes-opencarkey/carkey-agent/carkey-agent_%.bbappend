# Parsed only when meta-tpm (meta-security, collection "tpm-layer", which has the tpm2-tss
# recipe) is in the build. The TPM 2.0 key vault (agent.json vault "tpm2") loads no tss2
# library: the agent frames TPM commands itself and writes them to /dev/tpmrm0. What is left to
# recommend is tpm2-tss's udev rules, which give /dev/tpmrm0 to the tss group (board/udev's
# 60-opencarkey.rules states the same rule for images without them); an image can drop it with
# BAD_RECOMMENDATIONS.
RRECOMMENDS:${PN} += "\
    tpm2-tss \
"

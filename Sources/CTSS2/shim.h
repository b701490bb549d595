// tpm2-tss (libtss2-dev): types and prototypes only. Nothing links against these libraries:
// the TPM vault loads libtss2-esys/libtss2-tctildr/libtss2-mu at run time (dlopen), so the
// static agent runs on boards without them and the libraries ship only where a TPM is.
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

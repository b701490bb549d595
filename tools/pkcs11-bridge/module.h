/* The loaded module and the bridge's one logged-in session. */
#ifndef CARKEY_PKCS11_BRIDGE_MODULE_H
#define CARKEY_PKCS11_BRIDGE_MODULE_H

#include <p11-kit/pkcs11.h>

#include "frame.h"
#include "protocol.h"

extern CK_FUNCTION_LIST_PTR bridge_functions;
extern CK_SESSION_HANDLE bridge_session;

/* OPEN: load and initialise the module (first time), find the token, open a session, log in. */
void bridge_open(const char *module_path, reader_t *in, writer_t *out);
/* Close the session and finalize the module (at exit). */
void bridge_close(void);
/* A STATUS_PKCS11 answer. */
void reply_pkcs11(writer_t *out, CK_RV rv, const char *function);

#endif

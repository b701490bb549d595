/* Every operation after OPEN, on the open session. */
#ifndef CARKEY_PKCS11_BRIDGE_CALLS_H
#define CARKEY_PKCS11_BRIDGE_CALLS_H

#include "module.h"

void bridge_call(uint8_t operation, reader_t *in, writer_t *out);

#endif

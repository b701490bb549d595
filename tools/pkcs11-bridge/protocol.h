/* Operation, status and failure codes of the bridge protocol (docs/pkcs11-bridge.md). The Swift
 * side's twin is PKCS11BridgeMessage.swift; a change here is a change there and in the doc. */
#ifndef CARKEY_PKCS11_BRIDGE_PROTOCOL_H
#define CARKEY_PKCS11_BRIDGE_PROTOCOL_H

enum bridge_operation {
    OP_OPEN = 1,
    OP_FIND = 2,
    OP_ATTRIBUTE = 3,
    OP_GENERATE_KEY_PAIR = 4,
    OP_GENERATE_KEY = 5,
    OP_SIGN = 6,
    OP_DERIVE_ECDH = 7,
    OP_DESTROY = 8,
    OP_AES_GCM = 9,
};

enum bridge_status {
    STATUS_OK = 0,
    STATUS_PKCS11 = 1, /* u64 CK_RV, bytes function name */
    STATUS_BRIDGE = 2, /* u8 failure, bytes detail */
};

enum bridge_failure {
    FAIL_MALFORMED = 1,
    FAIL_MODULE_MISSING = 2,
    FAIL_MODULE_NOT_LOADABLE = 3,
    FAIL_NOT_PKCS11 = 4,
    FAIL_UNSUPPORTED_VERSION = 5,
    FAIL_TOKEN_NOT_FOUND = 6,
    FAIL_NOT_OPEN = 7,
    FAIL_ATTRIBUTE_UNAVAILABLE = 8,
};

/* Field caps beyond the frame's own (frame.h). */
#define BRIDGE_MAX_LABEL 32u
#define BRIDGE_MAX_PIN 256u
#define BRIDGE_MAX_POINT 256u
#define BRIDGE_MAX_IV 64u

#endif

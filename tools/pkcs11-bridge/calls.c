/* The PKCS#11 calls the vault makes on its open session (the Swift side is PKCS11Calls.swift),
 * one handler per operation: parse every field, check nothing is left over, call, answer.
 * Output buffers that may hold secrets (a shared secret, an unwrapped storage key) are wiped
 * before the handler returns; the answer frame is wiped by the caller once written. */
#include "calls.h"

#include <string.h>

static void malformed(writer_t *out, const char *operation) {
    write_u8(out, STATUS_BRIDGE);
    write_u8(out, FAIL_MALFORMED);
    write_bytes(out, (const uint8_t *)operation, strlen(operation));
}

/* The template's CK_ATTRIBUTE array; values point into the request frame. */
static void attributes(const template_t *t, CK_ATTRIBUTE *array) {
    for (uint32_t i = 0; i < t->count; i++) {
        array[i].type = t->items[i].type;
        array[i].pValue = (void *)t->items[i].value;
        array[i].ulValueLen = t->items[i].length;
    }
}

static void find(reader_t *in, writer_t *out) {
    uint32_t limit = read_u32(in);
    template_t t;
    read_template(in, &t);
    if (!read_finished(in) || limit == 0 || limit > BRIDGE_MAX_HANDLES) return malformed(out, "FIND");
    CK_ATTRIBUTE array[BRIDGE_MAX_ATTRIBUTES];
    attributes(&t, array);
    CK_RV rv = bridge_functions->C_FindObjectsInit(bridge_session, array, t.count);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_FindObjectsInit");
    CK_OBJECT_HANDLE handles[BRIDGE_MAX_HANDLES];
    CK_ULONG found = 0;
    rv = bridge_functions->C_FindObjects(bridge_session, handles, limit, &found);
    /* Always end the search, or the session refuses every other operation. */
    bridge_functions->C_FindObjectsFinal(bridge_session);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_FindObjects");
    if (found > limit) found = limit;
    write_u8(out, STATUS_OK);
    write_u32(out, (uint32_t)found);
    for (CK_ULONG i = 0; i < found; i++) write_u64(out, handles[i]);
}

static void attribute(reader_t *in, writer_t *out) {
    CK_OBJECT_HANDLE object = read_u64(in);
    CK_ATTRIBUTE_TYPE type = read_u64(in);
    if (!read_finished(in)) return malformed(out, "ATTRIBUTE");
    CK_ATTRIBUTE probe = {type, NULL, 0};
    CK_RV rv = bridge_functions->C_GetAttributeValue(bridge_session, object, &probe, 1);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_GetAttributeValue");
    /* CK_UNAVAILABLE_INFORMATION (all ones) for a sensitive or missing attribute. */
    if (probe.ulValueLen == CK_UNAVAILABLE_INFORMATION || probe.ulValueLen > BRIDGE_MAX_BYTES) {
        write_u8(out, STATUS_BRIDGE);
        write_u8(out, FAIL_ATTRIBUTE_UNAVAILABLE);
        write_bytes(out, NULL, 0);
        return;
    }
    uint8_t value[BRIDGE_MAX_BYTES];
    CK_ATTRIBUTE read = {type, value, probe.ulValueLen};
    rv = bridge_functions->C_GetAttributeValue(bridge_session, object, &read, 1);
    if (rv == CKR_OK && read.ulValueLen <= probe.ulValueLen) {
        write_u8(out, STATUS_OK);
        write_bytes(out, value, read.ulValueLen);
    } else {
        reply_pkcs11(out, rv == CKR_OK ? CKR_GENERAL_ERROR : rv, "C_GetAttributeValue");
    }
    /* The value may be a shared secret. */
    explicit_bzero(value, sizeof value);
}

static void generate_key_pair(reader_t *in, writer_t *out) {
    CK_MECHANISM mechanism = {read_u64(in), NULL, 0};
    template_t public_template, private_template;
    read_template(in, &public_template);
    read_template(in, &private_template);
    if (!read_finished(in)) return malformed(out, "GENERATE_KEY_PAIR");
    CK_ATTRIBUTE public_array[BRIDGE_MAX_ATTRIBUTES], private_array[BRIDGE_MAX_ATTRIBUTES];
    attributes(&public_template, public_array);
    attributes(&private_template, private_array);
    CK_OBJECT_HANDLE public_key = 0, private_key = 0;
    CK_RV rv = bridge_functions->C_GenerateKeyPair(bridge_session, &mechanism, public_array, public_template.count,
                                                   private_array, private_template.count, &public_key, &private_key);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_GenerateKeyPair");
    write_u8(out, STATUS_OK);
    write_u64(out, public_key);
    write_u64(out, private_key);
}

static void generate_key(reader_t *in, writer_t *out) {
    CK_MECHANISM mechanism = {read_u64(in), NULL, 0};
    template_t t;
    read_template(in, &t);
    if (!read_finished(in)) return malformed(out, "GENERATE_KEY");
    CK_ATTRIBUTE array[BRIDGE_MAX_ATTRIBUTES];
    attributes(&t, array);
    CK_OBJECT_HANDLE key = 0;
    CK_RV rv = bridge_functions->C_GenerateKey(bridge_session, &mechanism, array, t.count, &key);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_GenerateKey");
    write_u8(out, STATUS_OK);
    write_u64(out, key);
}

static void sign(reader_t *in, writer_t *out) {
    CK_OBJECT_HANDLE key = read_u64(in);
    CK_MECHANISM mechanism = {read_u64(in), NULL, 0};
    uint32_t max_length = read_u32(in);
    uint32_t data_length = 0;
    const uint8_t *data = read_bytes(in, BRIDGE_MAX_BYTES, &data_length);
    if (!read_finished(in) || max_length > BRIDGE_MAX_BYTES) return malformed(out, "SIGN");
    CK_RV rv = bridge_functions->C_SignInit(bridge_session, &mechanism, key);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_SignInit");
    uint8_t signature[BRIDGE_MAX_BYTES];
    CK_ULONG length = max_length;
    rv = bridge_functions->C_Sign(bridge_session, (CK_BYTE_PTR)data, data_length, signature, &length);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_Sign");
    write_u8(out, STATUS_OK);
    write_bytes(out, signature, length <= max_length ? length : max_length);
}

static void derive_ecdh(reader_t *in, writer_t *out) {
    CK_OBJECT_HANDLE key = read_u64(in);
    uint32_t point_length = 0;
    const uint8_t *point = read_bytes(in, BRIDGE_MAX_POINT, &point_length);
    template_t t;
    read_template(in, &t);
    if (!read_finished(in)) return malformed(out, "DERIVE_ECDH");
    /* No KDF: the raw x-coordinate, as PKCS11IdentityKey expects. */
    CK_ECDH1_DERIVE_PARAMS parameters = {CKD_NULL, 0, NULL, point_length, (CK_BYTE_PTR)point};
    CK_MECHANISM mechanism = {CKM_ECDH1_DERIVE, &parameters, sizeof parameters};
    CK_ATTRIBUTE array[BRIDGE_MAX_ATTRIBUTES];
    attributes(&t, array);
    CK_OBJECT_HANDLE derived = 0;
    CK_RV rv = bridge_functions->C_DeriveKey(bridge_session, &mechanism, key, array, t.count, &derived);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_DeriveKey");
    write_u8(out, STATUS_OK);
    write_u64(out, derived);
}

static void destroy(reader_t *in, writer_t *out) {
    CK_OBJECT_HANDLE object = read_u64(in);
    if (!read_finished(in)) return malformed(out, "DESTROY");
    CK_RV rv = bridge_functions->C_DestroyObject(bridge_session, object);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, "C_DestroyObject");
    write_u8(out, STATUS_OK);
}

static void aes_gcm(reader_t *in, writer_t *out) {
    uint8_t encrypt = read_u8(in);
    CK_OBJECT_HANDLE key = read_u64(in);
    uint32_t tag_bits = read_u32(in);
    uint32_t iv_length = 0, aad_length = 0, input_length = 0;
    const uint8_t *iv = read_bytes(in, BRIDGE_MAX_IV, &iv_length);
    const uint8_t *aad = read_bytes(in, BRIDGE_MAX_ATTRIBUTE_LENGTH, &aad_length);
    /* Room for the tag and a block of slack in the answer. */
    const uint8_t *input = read_bytes(in, BRIDGE_MAX_BYTES - 64, &input_length);
    if (!read_finished(in) || encrypt > 1 || tag_bits > 128 || tag_bits % 8 != 0) return malformed(out, "AES_GCM");
    CK_GCM_PARAMS parameters = {(CK_BYTE_PTR)iv, iv_length, iv_length * 8, (CK_BYTE_PTR)aad, aad_length, tag_bits};
    CK_MECHANISM mechanism = {CKM_AES_GCM, &parameters, sizeof parameters};
    CK_RV rv = encrypt ? bridge_functions->C_EncryptInit(bridge_session, &mechanism, key)
                       : bridge_functions->C_DecryptInit(bridge_session, &mechanism, key);
    if (rv != CKR_OK) return reply_pkcs11(out, rv, encrypt ? "C_EncryptInit" : "C_DecryptInit");
    uint8_t output[BRIDGE_MAX_BYTES];
    CK_ULONG length = input_length + tag_bits / 8 + 16;
    rv = encrypt ? bridge_functions->C_Encrypt(bridge_session, (CK_BYTE_PTR)input, input_length, output, &length)
                 : bridge_functions->C_Decrypt(bridge_session, (CK_BYTE_PTR)input, input_length, output, &length);
    if (rv != CKR_OK) {
        reply_pkcs11(out, rv, encrypt ? "C_Encrypt" : "C_Decrypt");
    } else {
        write_u8(out, STATUS_OK);
        write_bytes(out, output, length);
    }
    /* A decrypt's output is the unwrapped storage key. */
    explicit_bzero(output, sizeof output);
}

void bridge_call(uint8_t operation, reader_t *in, writer_t *out) {
    if (bridge_session == CK_INVALID_HANDLE) {
        write_u8(out, STATUS_BRIDGE);
        write_u8(out, FAIL_NOT_OPEN);
        write_bytes(out, (const uint8_t *)"no session: OPEN first", 22);
        return;
    }
    switch (operation) {
    case OP_FIND: return find(in, out);
    case OP_ATTRIBUTE: return attribute(in, out);
    case OP_GENERATE_KEY_PAIR: return generate_key_pair(in, out);
    case OP_GENERATE_KEY: return generate_key(in, out);
    case OP_SIGN: return sign(in, out);
    case OP_DERIVE_ECDH: return derive_ecdh(in, out);
    case OP_DESTROY: return destroy(in, out);
    case OP_AES_GCM: return aes_gcm(in, out);
    default: return malformed(out, "unknown operation");
    }
}

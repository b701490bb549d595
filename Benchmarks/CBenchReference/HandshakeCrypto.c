// The primitive operations a car performs for one handshake plus one command, as direct EVP
// calls with nothing else around them: the floor the Swift protocol engine is compared with.
// Reusable objects (algorithm fetches, the key-generation context, the long-term keys) are
// set up once, as a careful C implementation would.
#include "CBenchReference.h"
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <string.h>

struct reference {
    EVP_PKEY *identity;
    EVP_PKEY *phone;
    EVP_PKEY_CTX *keygen;
    EVP_PKEY *parameters;
    EVP_MD *sha256;
    EVP_KDF *hkdf;
    EVP_CIPHER *gcm;
    EVP_CIPHER_CTX *cipher;
};

static void reference_free(struct reference *r) {
    EVP_PKEY_free(r->identity);
    EVP_PKEY_free(r->phone);
    EVP_PKEY_CTX_free(r->keygen);
    EVP_PKEY_free(r->parameters);
    EVP_MD_free(r->sha256);
    EVP_KDF_free(r->hkdf);
    EVP_CIPHER_free(r->gcm);
    EVP_CIPHER_CTX_free(r->cipher);
}

static int reference_init(struct reference *r, const unsigned char *identity_pkcs8, size_t identity_length,
                          const unsigned char *phone_spki, size_t phone_spki_length) {
    memset(r, 0, sizeof *r);
    const unsigned char *cursor = identity_pkcs8;
    PKCS8_PRIV_KEY_INFO *info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &cursor, (long)identity_length);
    if (info != NULL) {
        r->identity = EVP_PKCS82PKEY(info);
        PKCS8_PRIV_KEY_INFO_free(info);
    }
    cursor = phone_spki;
    r->phone = d2i_PUBKEY(NULL, &cursor, (long)phone_spki_length);
    r->keygen = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    // P-256 domain parameters for importing peer points, as libssl imports key shares.
    EVP_PKEY_CTX *params_ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    OSSL_PARAM group[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0),
        OSSL_PARAM_construct_end(),
    };
    if (params_ctx == NULL || EVP_PKEY_fromdata_init(params_ctx) != 1
        || EVP_PKEY_fromdata(params_ctx, &r->parameters, EVP_PKEY_KEY_PARAMETERS, group) != 1) {
        r->parameters = NULL;
    }
    EVP_PKEY_CTX_free(params_ctx);
    r->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    r->hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    r->gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    r->cipher = EVP_CIPHER_CTX_new();
    return r->identity && r->phone && r->keygen && r->parameters && r->sha256 && r->hkdf && r->gcm && r->cipher
        && EVP_PKEY_keygen_init(r->keygen) == 1 && EVP_PKEY_CTX_set_group_name(r->keygen, "P-256") == 1;
}

static int hkdf(struct reference *r, const unsigned char *ikm, const unsigned char *salt,
                const unsigned char *info, size_t info_length, unsigned char *out) {
    EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(r->hkdf);
    if (ctx == NULL) return 0;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, 32),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, 32),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_length),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_KDF_derive(ctx, out, 32, params) == 1;
    EVP_KDF_CTX_free(ctx);
    return ok;
}

/// AES-256-GCM over `length` bytes with a 10-byte header as AAD. Encrypts and writes the tag,
/// or decrypts and checks `tag` (the result of the check is returned, the work is the same).
static int gcm(struct reference *r, int encrypt, const unsigned char *key, const unsigned char *nonce,
               const unsigned char *aad, const unsigned char *in, int length, unsigned char *out, unsigned char *tag) {
    int n = 0;
    if (EVP_CipherInit_ex2(r->cipher, r->gcm, key, nonce, encrypt, NULL) != 1) return 0;
    if (EVP_CipherUpdate(r->cipher, NULL, &n, aad, 10) != 1) return 0;
    if (EVP_CipherUpdate(r->cipher, out, &n, in, length) != 1) return 0;
    if (!encrypt && EVP_CIPHER_CTX_ctrl(r->cipher, EVP_CTRL_GCM_SET_TAG, 16, tag) != 1) return 0;
    int finished = EVP_CipherFinal_ex(r->cipher, out + n, &n) == 1;
    if (encrypt && finished) return EVP_CIPHER_CTX_ctrl(r->cipher, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    return finished;
}

static int one_handshake(struct reference *r, const unsigned char *peer_point, const unsigned char *signed_data,
                         const unsigned char *signature, size_t signature_length) {
    int ok = 1;
    unsigned char challenge[32], point[65], input[208], der[80], shared[32], transcript[368], th[32];
    unsigned char info[47], p2c[32], c2p[32], nonce[12] = {0}, header[10] = {0}, text[32], tag[16];
    size_t length;
    EVP_PKEY *ephemeral = NULL, *peer = NULL;

    // Hello -> Challenge: random challenge, ephemeral key (and its point for the wire), the
    // phone's ephemeral point imported and checked, one signature over 208 bytes.
    ok &= RAND_bytes(challenge, 32) == 1;
    ok &= EVP_PKEY_generate(r->keygen, &ephemeral) == 1;
    ok &= ephemeral && EVP_PKEY_get_octet_string_param(ephemeral, OSSL_PKEY_PARAM_PUB_KEY, point, 65, &length) == 1;
    peer = EVP_PKEY_new();
    ok &= peer && EVP_PKEY_copy_parameters(peer, r->parameters) == 1
        && EVP_PKEY_set1_encoded_public_key(peer, peer_point, 65) == 1; // checks the point is on the curve
    memset(input, 0x5a, sizeof input);
    memcpy(input + 16, challenge, 32);
    memcpy(input + 48, point, 65);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    length = sizeof der;
    ok &= md && EVP_DigestSignInit_ex(md, NULL, "SHA256", NULL, NULL, r->identity, NULL) == 1
        && EVP_DigestSign(md, der, &length, input, sizeof input) == 1;
    EVP_MD_CTX_free(md);

    // AuthResponse -> SessionAccepted: one verification over 36 bytes, ECDH, the transcript
    // hash, two HKDF derivations, one GCM seal of 17 bytes.
    md = EVP_MD_CTX_new();
    ok &= md && EVP_DigestVerifyInit_ex(md, NULL, "SHA256", NULL, NULL, r->phone, NULL) == 1
        && EVP_DigestVerify(md, signature, signature_length, signed_data, 36) == 1;
    EVP_MD_CTX_free(md);
    EVP_PKEY_CTX *derive = ephemeral ? EVP_PKEY_CTX_new(ephemeral, NULL) : NULL;
    length = 32;
    ok &= derive && peer && EVP_PKEY_derive_init(derive) == 1 && EVP_PKEY_derive_set_peer_ex(derive, peer, 0) == 1
        && EVP_PKEY_derive(derive, shared, &length) == 1;
    EVP_PKEY_CTX_free(derive);
    memset(transcript, 0xa5, sizeof transcript);
    memcpy(transcript, der, 64);
    unsigned int digest_length = 0;
    ok &= EVP_Digest(transcript, sizeof transcript, th, &digest_length, r->sha256, NULL) == 1;
    memcpy(info, "OCK1 phone->car", 15);
    memcpy(info + 15, th, 32);
    ok &= hkdf(r, shared, challenge, info, sizeof info, p2c);
    memcpy(info, "OCK1 car->phone", 15);
    ok &= hkdf(r, shared, challenge, info, sizeof info, c2p);
    memset(text, 1, sizeof text);
    nonce[0] = 2;
    ok &= gcm(r, 1, c2p, nonce, header, text, 17, text, tag);

    // Command -> Response: open 6 bytes (the tag check runs; there is no phone here to make
    // it pass, so its result is not counted), seal 9 bytes.
    nonce[0] = 1;
    nonce[11] = 1;
    (void)gcm(r, 0, p2c, nonce, header, text, 6, text, tag);
    nonce[0] = 2;
    ok &= gcm(r, 1, c2p, nonce, header, text, 9, text, tag);

    OPENSSL_cleanse(shared, sizeof shared);
    EVP_PKEY_free(ephemeral);
    EVP_PKEY_free(peer);
    return ok;
}

long ock_bench_evp_handshake_crypto(const unsigned char *identity_pkcs8, size_t identity_length,
                                    const unsigned char *phone_spki, size_t phone_spki_length,
                                    const unsigned char *peer_points, const unsigned char *signed_data,
                                    const unsigned char *signatures, size_t signature_stride,
                                    const size_t *signature_lengths, size_t count, long iterations) {
    struct reference r;
    if (!reference_init(&r, identity_pkcs8, identity_length, phone_spki, phone_spki_length)) {
        reference_free(&r);
        return -1;
    }
    long completed = 0;
    for (long i = 0; i < iterations; i++) {
        size_t k = (size_t)i % count;
        completed += one_handshake(&r, peer_points + 65 * k, signed_data + 36 * k,
                                   signatures + signature_stride * k, signature_lengths[k]);
    }
    reference_free(&r);
    return completed;
}

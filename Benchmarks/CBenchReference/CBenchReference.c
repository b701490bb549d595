#include "CBenchReference.h"
#include <openssl/evp.h>
#include <openssl/x509.h>

long ock_bench_evp_verify(const unsigned char *spki, size_t spki_length,
                          const unsigned char *messages, size_t message_length, size_t count,
                          const unsigned char *signatures, size_t signature_stride,
                          const size_t *signature_lengths, long iterations) {
    const unsigned char *cursor = spki;
    EVP_PKEY *key = d2i_PUBKEY(NULL, &cursor, (long)spki_length);
    if (key == NULL) return -1;
    long verified = 0;
    for (long i = 0; i < iterations; i++) {
        size_t k = (size_t)i % count;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        if (ctx == NULL) break;
        if (EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, key) == 1 &&
            EVP_DigestVerify(ctx, signatures + k * signature_stride, signature_lengths[k],
                             messages + k * message_length, message_length) == 1) {
            verified++;
        }
        EVP_MD_CTX_free(ctx);
    }
    EVP_PKEY_free(key);
    return verified;
}

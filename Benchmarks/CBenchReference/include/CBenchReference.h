// Direct OpenSSL EVP reference loops for carkey-bench: the same work as the Swift layer with
// no Swift in between, timed in the same run so results are ratios, not absolute claims.
#ifndef OPENCARKEY_CBENCHREFERENCE_H
#define OPENCARKEY_CBENCHREFERENCE_H

#include <stddef.h>

/// Verifies `iterations` ECDSA-SHA256 signatures with EVP_DigestVerify, cycling through `count`
/// (message, signature) pairs. Messages are `message_length` bytes each, packed; signatures are
/// DER, packed at `signature_stride` with lengths in `signature_lengths`. The key is an SPKI DER,
/// decoded once. Returns how many verified, or -1 if the key could not be decoded.
long ock_bench_evp_verify(const unsigned char *spki, size_t spki_length,
                          const unsigned char *messages, size_t message_length, size_t count,
                          const unsigned char *signatures, size_t signature_stride,
                          const size_t *signature_lengths, long iterations);

#endif

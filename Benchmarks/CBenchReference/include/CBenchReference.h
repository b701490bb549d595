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

/// Runs, `iterations` times, the crypto the car performs for one handshake plus one command
/// (HandshakeCrypto.c lists it): random challenge, ephemeral key generation and export, import
/// of the phone's ephemeral point, one ECDSA sign over 208 bytes, one ECDSA verify over 36
/// bytes, one ECDH, one SHA-256 over 368 bytes, two HKDF-SHA256, three AES-256-GCM operations.
/// Inputs cycle through `count` sets: 65-byte SEC1 points, 36-byte signed data and DER
/// signatures by the phone key (packed at `signature_stride`). The identity key is PKCS#8 DER,
/// the phone key SPKI DER, both decoded once. Returns the iterations whose every step
/// succeeded, or -1 if set-up failed.
long ock_bench_evp_handshake_crypto(const unsigned char *identity_pkcs8, size_t identity_length,
                                    const unsigned char *phone_spki, size_t phone_spki_length,
                                    const unsigned char *peer_points, const unsigned char *signed_data,
                                    const unsigned char *signatures, size_t signature_stride,
                                    const size_t *signature_lengths, size_t count, long iterations);

#endif

// Direct OpenSSL EVP reference implementations for carkey-bench.
// Placeholder: the real reference functions replace this with the crypto benchmarks.
#ifndef OPENCARKEY_CBENCHREFERENCE_H
#define OPENCARKEY_CBENCHREFERENCE_H

// Returns 0. Exists only so the target has a translation unit until the benchmarks land.
int cbench_reference_placeholder(void);

#endif

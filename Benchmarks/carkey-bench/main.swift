// carkey-bench: crypto and protocol benchmarks (`make bench`).
//
// Output contract: one JSON object per line on stdout, e.g.
//   {"name":"p256.verify","impl":"swift","iterations":1000,"ns_per_op":12345}
// Diagnostics go to stderr. The benchmarks themselves are added with the crypto core;
// CBenchReference holds the direct-EVP C reference they are compared against.
import CBenchReference
import Protocol

// No benchmarks yet: prints nothing.
_ = cbench_reference_placeholder()

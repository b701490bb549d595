// Comparisons of secrets (MACs, tags, codes) whose timing must not depend on where bytes differ.
import COpenSSL

public enum ConstantTime {
    /// True when both have the same length and bytes. The length is not secret; the content is.
    public static func equals(_ a: Bytes, _ b: Bytes) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }

    /// Overwrites a secret buffer in a way the optimiser may not remove.
    public static func wipe(_ bytes: inout Bytes) {
        let count = bytes.count
        bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, count) }
    }
}

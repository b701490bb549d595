// Byte helpers for TPM integers that travel as minimal big-endian strings (ECC coordinates,
// ECDSA r and s) but are used as fixed 32-byte values (P-256).
import Protocol

enum TPM2Buffers {
    /// A big-endian integer of at most 32 bytes, left-padded with zeros to 32 (P-256 r, s, x).
    static func padded32(_ bytes: Bytes) -> Bytes? {
        var trimmed = bytes[...]
        while trimmed.count > 32, trimmed.first == 0 { trimmed = trimmed.dropFirst() }
        guard trimmed.count <= 32 else { return nil }
        return Bytes(repeating: 0, count: 32 - trimmed.count) + trimmed
    }
}

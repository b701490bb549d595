// TPM2B_* structures hold a size and a fixed C array (a Swift tuple). These move bytes in and
// out of such arrays without per-type code.
import Protocol

enum TPM2Buffers {
    /// Copies `bytes` into the C array `buffer`; returns the size to store beside it. Callers
    /// pass data whose length they have already bounded (the precondition is a programming error).
    static func store<Buffer>(_ bytes: Bytes, into buffer: inout Buffer) -> UInt16 {
        withUnsafeMutableBytes(of: &buffer) { raw in
            precondition(bytes.count <= raw.count, "TPM2B buffer of \(raw.count) bytes, given \(bytes.count)")
            raw.copyBytes(from: bytes)
        }
        return UInt16(bytes.count)
    }

    /// The first `size` bytes of the C array `buffer` (clamped to its capacity: a size from the
    /// TPM larger than the array is treated as the whole array, never read past).
    static func load<Buffer>(_ buffer: Buffer, size: UInt16) -> Bytes {
        withUnsafeBytes(of: buffer) { raw in Bytes(raw.prefix(Int(size))) }
    }

    /// Zeroes a value that held a secret (a TPM2B_SENSITIVE_DATA, a TPM2B_SENSITIVE_CREATE).
    static func wipe<Value>(_ value: inout Value) {
        withUnsafeMutableBytes(of: &value) { raw in
            for index in raw.indices { raw[index] = 0 }
        }
    }

    /// A big-endian integer of at most 32 bytes, left-padded with zeros to 32 (P-256 r, s, x).
    static func padded32(_ bytes: Bytes) -> Bytes? {
        var trimmed = bytes[...]
        while trimmed.count > 32, trimmed.first == 0 { trimmed = trimmed.dropFirst() }
        guard trimmed.count <= 32 else { return nil }
        return Bytes(repeating: 0, count: 32 - trimmed.count) + trimmed
    }
}

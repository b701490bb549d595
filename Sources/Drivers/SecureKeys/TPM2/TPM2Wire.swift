// The TPM's wire format: big-endian integers and size-prefixed byte strings (TPM2B), TCG TPM
// 2.0 Library Part 1 §18 (command/response structure) and Part 2 §5 (base types) and §10
// (TPM2B). The reader is bounded: it never reads past its input and says why it stopped.
import Protocol

/// Why a TPM structure did not parse. Typed, so the vault can tell a short answer from a lie.
enum TPM2WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ended `needed` bytes before the structure did (at `offset`).
    case truncated(offset: Int, needed: Int)
    /// A size field claims more than its container allows.
    case oversized(what: String, size: Int, limit: Int)
    /// A field holds a value this client does not accept (an unknown algorithm, a bad tag).
    case unexpected(what: String, value: UInt32)
    /// Bytes left over after the structure.
    case trailing(count: Int)

    var description: String {
        switch self {
        case .truncated(let offset, let needed): return "truncated at byte \(offset) (\(needed) more bytes needed)"
        case .oversized(let what, let size, let limit): return "\(what) of \(size) bytes (at most \(limit))"
        case .unexpected(let what, let value): return "unexpected \(what) 0x\(String(value, radix: 16))"
        case .trailing(let count): return "\(count) trailing bytes"
        }
    }
}

/// The TPM's largest command or response: MAX_COMMAND_SIZE and MAX_RESPONSE_SIZE are
/// implementation values (Part 2, "Implementation Parameters"), 4096 in the TCG PC Client
/// Platform TPM Profile and in swtpm/libtpms; nothing larger is sent or accepted.
enum TPM2Limits {
    static let maxMessage = 4096
}

struct TPM2Writer {
    private(set) var bytes: Bytes = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(truncatingIfNeeded: value)] }
    mutating func u32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
    mutating func raw(_ data: Bytes) { bytes += data }
    /// A TPM2B: UINT16 size, then the bytes (Part 2 §10.4). Callers bound `data` (the TPM
    /// refuses oversize values with TPM_RC_SIZE anyway).
    mutating func sized(_ data: Bytes) {
        precondition(data.count <= Int(UInt16.max))
        u16(UInt16(data.count))
        raw(data)
    }
    /// A TPM2B whose content is itself a structure (TPM2B_PUBLIC, TPM2B_SENSITIVE_CREATE).
    mutating func sized(_ build: (inout TPM2Writer) -> Void) {
        var inner = TPM2Writer()
        build(&inner)
        sized(inner.bytes)
        inner.wipe()
    }
    /// Zeroes what was written (a writer that held a secret).
    mutating func wipe() { ConstantTime.wipe(&bytes) }
}

struct TPM2Reader {
    private let bytes: Bytes
    private(set) var offset: Int
    let end: Int

    init(_ bytes: Bytes) {
        self.bytes = bytes
        offset = 0
        end = bytes.count
    }

    /// A reader over `count` bytes from the current offset (a size-delimited area); the outer
    /// reader moves past them.
    mutating func sub(_ count: Int) throws(TPM2WireError) -> TPM2Reader {
        let slice = try raw(count)
        return TPM2Reader(slice)
    }

    var remaining: Int { end - offset }

    mutating func raw(_ count: Int) throws(TPM2WireError) -> Bytes {
        guard count >= 0, count <= remaining else { throw .truncated(offset: offset, needed: count - remaining) }
        defer { offset += count }
        return Bytes(bytes[offset..<(offset + count)])
    }

    mutating func u8() throws(TPM2WireError) -> UInt8 { try raw(1)[0] }
    mutating func u16() throws(TPM2WireError) -> UInt16 {
        let b = try raw(2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }
    mutating func u32() throws(TPM2WireError) -> UInt32 {
        let b = try raw(4)
        return UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
    }

    /// A TPM2B whose buffer may hold at most `limit` bytes (the C structure's array size).
    mutating func sized(_ what: String, limit: Int) throws(TPM2WireError) -> Bytes {
        let size = Int(try u16())
        guard size <= limit else { throw .oversized(what: what, size: size, limit: limit) }
        return try raw(size)
    }

    /// Refuses leftover bytes: a structure with an appendix was not made by a TPM.
    func finish() throws(TPM2WireError) {
        guard remaining == 0 else { throw .trailing(count: remaining) }
    }
}

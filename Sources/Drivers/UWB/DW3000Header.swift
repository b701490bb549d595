// The DW3000 SPI transaction header (shared/reference/dw3000.md, section 1): a 1-byte fast
// command, a 1-byte short header for plain accesses at offset 0, or a 2-byte full header
// carrying a 7-bit offset and the access mode (plain, or AND-OR on 8/16/32 bits).

public enum DW3000FastCommand: UInt8, Sendable, CaseIterable {
    case txrxOff = 0x00
    case tx = 0x01
    case rx = 0x02
    case delayedTX = 0x03
    case txThenReceive = 0x0C      // TX_W4R
    case delayedTXThenReceive = 0x0D  // DTX_W4R
    case clearIRQs = 0x12

    /// `0x80 | cmd << 1 | 1`: TXRXOFF 81, TX 83, RX 85, DTX 87, TX_W4R 99, DTX_W4R 9B, CLR_IRQS A5.
    public var byte: UInt8 { 0x80 | rawValue << 1 | 1 }
}

public enum DW3000Access: UInt8, Sendable {
    case plain = 0
    case andOr8 = 1
    case andOr16 = 2
    case andOr32 = 3

    /// Bytes of each mask in an AND-OR access.
    public var maskWidth: Int { self == .plain ? 0 : 1 << (Int(rawValue) - 1) }
}

public enum DW3000Header {
    /// The header for a read or write of `file` at `offset`. The short form is used when it can
    /// be (offset 0, plain access), as Qorvo's driver does; `forceFull` gives the 2-byte form
    /// some drivers always send.
    public static func encode(file: UInt8, offset: UInt16, write: Bool, access: DW3000Access = .plain,
                              forceFull: Bool = false) -> [UInt8] {
        precondition(file < 0x20 && offset < 0x80, "DW3000 header: file or offset out of range")
        let w: UInt8 = write ? 0x80 : 0
        if offset == 0 && access == .plain && !forceFull {
            return [w | file << 1]
        }
        let b0 = w | 0x40 | file << 1 | UInt8(offset >> 6)
        let b1 = UInt8(offset & 0x3F) << 2 | access.rawValue
        return [b0, b1]
    }

    public static func read(_ register: DW3000Register) -> [UInt8] {
        encode(file: register.file, offset: register.offset, write: false)
    }

    public static func write(_ register: DW3000Register, access: DW3000Access = .plain) -> [UInt8] {
        encode(file: register.file, offset: register.offset, write: true, access: access)
    }

    /// A decoded header (the simulator's view, and a check on `encode`).
    public enum Decoded: Equatable, Sendable {
        case fast(UInt8)
        case access(file: UInt8, offset: UInt16, write: Bool, mode: DW3000Access, headerLength: Int)
    }

    /// Decodes the first bytes of a transaction; nil when they are not a valid header.
    public static func decode(_ bytes: [UInt8]) -> Decoded? {
        guard let b0 = bytes.first else { return nil }
        let write = b0 & 0x80 != 0
        if b0 & 0x40 != 0 {
            guard bytes.count >= 2 else { return nil }
            let b1 = bytes[1]
            let offset = UInt16(b0 & 1) << 6 | UInt16(b1 >> 2)
            let mode = DW3000Access(rawValue: b1 & 3)!
            // AND-OR modes are writes only.
            if mode != .plain && !write { return nil }
            return .access(file: (b0 >> 1) & 0x1F, offset: offset, write: write, mode: mode, headerLength: 2)
        }
        if b0 & 1 != 0 {
            guard write else { return nil }
            return .fast((b0 >> 1) & 0x1F)
        }
        return .access(file: (b0 >> 1) & 0x1F, offset: 0, write: write, mode: .plain, headerLength: 1)
    }
}

/// Little-endian helpers: the DW3000 sends every multi-byte field low byte first.
enum LittleEndian {
    static func bytes<T: FixedWidthInteger>(_ value: T, count: Int = MemoryLayout<T>.size) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    static func value<T: FixedWidthInteger>(_ bytes: some Collection<UInt8>, as: T.Type = T.self) -> T {
        var result: T = 0
        for (index, byte) in bytes.enumerated() where index < MemoryLayout<T>.size {
            result |= T(byte) << (8 * index)
        }
        return result
    }
}

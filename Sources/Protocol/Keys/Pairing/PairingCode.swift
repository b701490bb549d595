// The one-time 6-digit code the car shows when its pairing window opens. A secret while the
// window is open: `description` never shows it.

public struct PairingCode: Sendable, Equatable, CustomStringConvertible {
    public static let digitCount = 6
    /// 10^6 * 4294 = 4 294 000 000: the largest multiple of 10^6 below 2^32. Draws at or above
    /// it are rejected, so every code is equally likely (no modulo bias).
    static let rejectionBound: UInt32 = 4_294_000_000

    /// Six ASCII digits; the SPAKE2+ password (PairingSPAKE.scalars).
    public let digits: Bytes

    public init(_ text: String) throws(MessageFormatError) {
        let bytes = Array(text.utf8)
        guard bytes.count == PairingCode.digitCount, bytes.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .invalidField(field: "pairingCode", reason: "must be exactly 6 decimal digits")
        }
        digits = bytes
    }

    /// Draws 4 bytes (UInt32 big-endian) at a time from `random` until one is below
    /// `rejectionBound`, then takes it modulo 10^6, zero-padded to six digits. Gives up after
    /// 64 draws (probability about 2^-1150 with a working generator).
    public static func generate(_ random: any RandomSource) throws -> PairingCode {
        for _ in 0..<64 {
            let draw = try random.randomBytes(4)
            guard draw.count == 4 else { throw CryptoError.invalidLength(field: "random draw", expected: 4, actual: draw.count) }
            let value = draw.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if value < rejectionBound { return fromValue(value % 1_000_000) }
        }
        throw CryptoError.openSSL("random source returned only rejected draws")
    }

    static func fromValue(_ value: UInt32) -> PairingCode {
        var digits = Bytes(repeating: 0x30, count: digitCount)
        var rest = value
        for index in stride(from: digitCount - 1, through: 0, by: -1) {
            digits[index] = 0x30 + UInt8(rest % 10)
            rest /= 10
        }
        return PairingCode(digits: digits)
    }

    private init(digits: Bytes) { self.digits = digits }

    /// The code to show the person at the car (display, console, `carkey-agent pair`).
    public var text: String { String(decoding: digits, as: UTF8.self) }

    public var description: String { "PairingCode(******)" }

    public static func == (lhs: PairingCode, rhs: PairingCode) -> Bool { ConstantTime.equals(lhs.digits, rhs.digits) }
}

// The car's advertising key (docs/protocol.md section 18.12): 16 random bytes, created once by
// the car and given only to enrolled owner phones (AdvertisingKeyGrant). It keys the rotating
// identifier in the car's BLE advertisement. A secret: never printed, never logged.

public struct AdvertisingKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public static let length = 16

    /// The 16 key bytes. A secret: callers must not log them.
    public let bytes: Bytes

    public init(bytes: Bytes) throws(MessageFormatError) {
        guard bytes.count == Self.length else {
            throw .invalidField(field: "advertisingKey", reason: "must be \(Self.length) bytes")
        }
        self.bytes = bytes
    }

    /// A fresh key from `random` (the car's CSPRNG).
    public static func generate(_ random: any RandomSource = SystemRandom()) throws -> AdvertisingKey {
        let drawn = try random.randomBytes(length)
        do throws(MessageFormatError) { return try AdvertisingKey(bytes: drawn) } catch {
            throw CryptoError.invalidLength(field: "random draw", expected: length, actual: drawn.count)
        }
    }

    public var description: String { "AdvertisingKey(redacted)" }
    public var debugDescription: String { description }
    /// `dump` and test failure messages show no key bytes either.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    public static func == (lhs: AdvertisingKey, rhs: AdvertisingKey) -> Bool { ConstantTime.equals(lhs.bytes, rhs.bytes) }
}

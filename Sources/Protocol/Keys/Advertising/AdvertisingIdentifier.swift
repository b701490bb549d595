// The rotating identifier in the car's BLE advertisement (docs/protocol.md section 18.12):
//
//   identifier = prand (3, fresh random per rotation) || hash (3)
//   hash       = first 3 bytes of HMAC-SHA256(advertisingKey, "OCK1-ADV-ID" || prand)
//
// Only a holder of the advertising key can tell that an identifier is this car's (like a
// Bluetooth resolvable private address, with our own key).

public struct AdvertisingIdentifier: Sendable, Equatable, CustomStringConvertible {
    /// The Manufacturer Specific Data payload length (after the company ID).
    public static let length = 6
    public static let prandLength = 3
    public static let hashLength = 3
    /// "OCK1-ADV-ID" = 4f434b312d4144562d4944
    public static let label: Bytes = Array("OCK1-ADV-ID".utf8)

    /// prand || hash, exactly as advertised. Public by design: anyone in range sees it.
    public let bytes: Bytes

    public var prand: Bytes { Array(bytes.prefix(Self.prandLength)) }

    /// Wraps 6 received bytes (no check that they belong to any key; see `resolve`).
    public init(bytes: Bytes) throws(MessageFormatError) {
        guard bytes.count == Self.length else {
            throw .invalidField(field: "advertisingIdentifier", reason: "must be \(Self.length) bytes")
        }
        self.bytes = bytes
    }

    /// The 3-byte hash for `prand` (3 bytes) under `key`.
    public static func hash(prand: Bytes, key: AdvertisingKey) -> Bytes {
        Array(HMACSHA256.authenticationCode(key: key.bytes, message: label + prand).prefix(hashLength))
    }

    /// The identifier for a given prand (3 bytes) under `key`.
    public static func make(prand: Bytes, key: AdvertisingKey) throws(MessageFormatError) -> AdvertisingIdentifier {
        guard prand.count == prandLength else {
            throw .invalidField(field: "prand", reason: "must be \(prandLength) bytes")
        }
        return try AdvertisingIdentifier(bytes: prand + hash(prand: prand, key: key))
    }

    /// A new identifier with a fresh prand from `random`.
    public static func random(key: AdvertisingKey, random: any RandomSource = SystemRandom()) throws -> AdvertisingIdentifier {
        let prand = try random.randomBytes(prandLength)
        do throws(MessageFormatError) { return try make(prand: prand, key: key) } catch {
            throw CryptoError.invalidLength(field: "random draw", expected: prandLength, actual: prand.count)
        }
    }

    /// True when `identifier` (the 6 advertised bytes) was made with `key`: the hash is
    /// recomputed from its prand and compared in constant time. Any other length is false.
    public static func resolve(_ identifier: Bytes, key: AdvertisingKey) -> Bool {
        guard identifier.count == length else { return false }
        let prand = Array(identifier.prefix(prandLength))
        return ConstantTime.equals(hash(prand: prand, key: key), Array(identifier.suffix(hashLength)))
    }

    public var description: String { "AdvertisingIdentifier(\(bytes.hexString))" }
}

/// When the car draws a new identifier: at every start, then every `intervalMillis` of
/// monotonic time (15 minutes by default, 1 to 60 minutes), and whenever the BLE layer forces
/// it (`rotate`, e.g. when the controller changes its resolvable private address, so that
/// address and identifier change together). Pure: time and randomness are injected.
public struct AdvertisingIdentifierRotation: Sendable {
    public static let defaultIntervalMillis: UInt64 = 15 * 60_000
    public static let allowedIntervalMillis: ClosedRange<UInt64> = 60_000...(60 * 60_000)

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The interval is outside 1 to 60 minutes.
        case intervalOutOfRange(UInt64)
        /// The random source failed; nothing was advertised.
        case randomFailed

        public var description: String {
            switch self {
            case .intervalOutOfRange(let millis): return "rotation interval \(millis) ms is outside 60000...3600000"
            case .randomFailed: return "random source failed while drawing a prand"
            }
        }
    }

    public let intervalMillis: UInt64
    private let key: AdvertisingKey
    private let random: any RandomSource
    /// The identifier to advertise now.
    public private(set) var current: AdvertisingIdentifier
    /// Monotonic time at which `update` draws the next identifier.
    public private(set) var nextRotationMillis: UInt64

    /// Starts with a fresh identifier (a restart never re-advertises an old one).
    public init(key: AdvertisingKey, now: UInt64, intervalMillis: UInt64 = defaultIntervalMillis,
                random: any RandomSource = SystemRandom()) throws(Failure) {
        guard Self.allowedIntervalMillis.contains(intervalMillis) else { throw .intervalOutOfRange(intervalMillis) }
        self.intervalMillis = intervalMillis
        self.key = key
        self.random = random
        self.current = try Self.draw(key: key, random: random)
        self.nextRotationMillis = now &+ intervalMillis
    }

    /// Draws a new identifier when the interval has run out. True when `current` changed.
    public mutating func update(now: UInt64) throws(Failure) -> Bool {
        guard now >= nextRotationMillis else { return false }
        try rotate(now: now)
        return true
    }

    /// Draws a new identifier now and restarts the interval.
    public mutating func rotate(now: UInt64) throws(Failure) {
        current = try Self.draw(key: key, random: random)
        nextRotationMillis = now &+ intervalMillis
    }

    private static func draw(key: AdvertisingKey, random: any RandomSource) throws(Failure) -> AdvertisingIdentifier {
        do { return try AdvertisingIdentifier.random(key: key, random: random) } catch { throw .randomFailed }
    }
}

// PairingHello, phone to car: the key the phone wants enrolled as an owner and its SPAKE2+
// share (docs/protocol.md section 18.6).
//
//   0        type 0x20
//   1        version 0x02
//   2..66    phonePublicKey (65, SEC1 uncompressed): the phone's long-term key (idProver)
//   67..131  shareP (65): X = x*P + w0*M
//
// Version 0x01 (67 bytes: type, version, phonePublicKey) is what apps before SPAKE2+ send. It
// decodes, so the car can answer it with `pairingVersion` ("update the app") instead of a
// generic fault; it is never accepted for pairing.

public struct PairingHelloMessage: Equatable, Sendable {
    public static let length = 132
    public static let legacyLength = 67

    /// `PairingWire.version`, or `PairingWire.legacyVersion` for an old app's hello.
    public let version: UInt8
    public let phonePublicKey: Bytes
    /// Empty in a legacy hello.
    public let shareP: Bytes

    public init(phonePublicKey: Bytes, shareP: Bytes) throws(MessageFormatError) {
        try checkSEC1Shape(phonePublicKey, field: "phonePublicKey")
        try checkSEC1Shape(shareP, field: "shareP")
        self.version = PairingWire.version
        self.phonePublicKey = phonePublicKey
        self.shareP = shareP
    }

    /// An old app's hello (tests, and the decoder).
    public static func legacy(phonePublicKey: Bytes) throws(MessageFormatError) -> PairingHelloMessage {
        try checkSEC1Shape(phonePublicKey, field: "phonePublicKey")
        return PairingHelloMessage(legacyKey: phonePublicKey)
    }

    private init(legacyKey: Bytes) {
        version = PairingWire.legacyVersion
        phonePublicKey = legacyKey
        shareP = []
    }

    public var isLegacy: Bool { version == PairingWire.legacyVersion }

    /// The fault the car answers this hello with before any other check (rule P0), whatever its
    /// state: `pairingVersion` for an old app's hello, nil otherwise. The car and `carkey decode`
    /// both read it, so the decoder names exactly the refusal the car sends.
    public var refusalOnSight: FaultCode? { isLegacy ? .pairingVersion : nil }

    public func encoded() -> Bytes { [MessageType.pairingHello.rawValue, version] + phonePublicKey + shareP }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> PairingHelloMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.pairingHello)
        let version = try reader.pairingVersion(allowLegacy: true)
        let key = try reader.bytes(Wire.publicKeyLength, "phonePublicKey")
        if version == PairingWire.legacyVersion {
            try reader.expectEnd()
            return try legacy(phonePublicKey: key)
        }
        let share = try reader.bytes(Wire.publicKeyLength, "shareP")
        try reader.expectEnd()
        return try PairingHelloMessage(phonePublicKey: key, shareP: share)
    }
}

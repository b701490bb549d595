// PairingHello, phone to car: the key the phone wants enrolled as an owner.
//
//   0      type 0x20
//   1      version 0x01
//   2..66  phonePublicKey (65, SEC1 uncompressed): the phone's long-term key

public struct PairingHelloMessage: Equatable, Sendable {
    public static let length = 67
    public let phonePublicKey: Bytes

    public init(phonePublicKey: Bytes) throws(MessageFormatError) {
        try checkSEC1Shape(phonePublicKey, field: "phonePublicKey")
        self.phonePublicKey = phonePublicKey
    }

    public func encoded() -> Bytes { [MessageType.pairingHello.rawValue, Wire.version] + phonePublicKey }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> PairingHelloMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.pairingHello)
        try reader.version()
        let key = try reader.bytes(Wire.publicKeyLength, "phonePublicKey")
        try reader.expectEnd()
        return try PairingHelloMessage(phonePublicKey: key)
    }
}

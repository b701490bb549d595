// Hello, phone to car: who I claim to be (key ID), my fresh ephemeral key, an optional share.
//
//   0      type 0x01
//   1      version 0x01
//   2..9   keyID (8)
//   10..74 phone ephemeral public key (65, SEC1 uncompressed)
//   75..76 certLen (UInt16 BE)
//   77..   share certificate (certLen bytes; 0 = none; format defined by the keys issue)

public struct HelloMessage: Equatable, Sendable {
    /// Fixed part before the certificate.
    public static let fixedLength = 77
    /// The certificate may use whatever the 1024-byte message bound leaves.
    public static let maxCertificateLength = Wire.maxMessageLength - fixedLength

    public let keyID: KeyID
    public let ephemeralPublicKey: Bytes
    public let shareCertificate: Bytes

    public init(keyID: KeyID, ephemeralPublicKey: Bytes, shareCertificate: Bytes = []) throws(MessageFormatError) {
        try checkSEC1Shape(ephemeralPublicKey, field: "phoneEphemeralPub")
        guard shareCertificate.count <= HelloMessage.maxCertificateLength else {
            throw .invalidField(field: "shareCertificate", reason: "at most \(HelloMessage.maxCertificateLength) bytes")
        }
        self.keyID = keyID
        self.ephemeralPublicKey = ephemeralPublicKey
        self.shareCertificate = shareCertificate
    }

    public func encoded() -> Bytes {
        var out: Bytes = [MessageType.hello.rawValue, Wire.version]
        out += keyID.bytes
        out += ephemeralPublicKey
        out.appendBE(UInt16(shareCertificate.count))
        out += shareCertificate
        return out
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> HelloMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.hello)
        try reader.version()
        let keyID = try KeyID(bytes: reader.bytes(KeyID.length, "keyID"))
        let ephemeral = try reader.bytes(Wire.publicKeyLength, "phoneEphemeralPub")
        let certLength = Int(try reader.uint16BE("certLen"))
        let certificate = try reader.bytes(certLength, "shareCertificate")
        try reader.expectEnd()
        return try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral, shareCertificate: certificate)
    }
}

extension ByteReader {
    /// Reads the type byte and insists on `type`; dispatch on the type happens in `Message`.
    mutating func expectType(_ type: MessageType) throws(MessageFormatError) {
        let byte = try byte("type")
        guard byte == type.rawValue else { throw .unknownMessageType(byte) }
    }
}

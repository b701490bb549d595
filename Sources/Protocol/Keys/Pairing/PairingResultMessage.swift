// PairingResult, car to phone: the outcome and, only on success, a MAC under the SPAKE2+
// K_shared (so the phone knows the enrollment, not only the exchange, succeeded).
//
//   0      type 0x23
//   1      version 0x02
//   2..3   result (UInt16 BE: 0 = enrolled, otherwise a fault code)
//   4..35  carMAC (32): HMAC-SHA256(K_shared, "OCK1-PAIR-CAR" || carPub || phonePub || challenge)
//          when result = 0; 32 zero bytes otherwise

public struct PairingResultMessage: Equatable, Sendable {
    public static let length = 36
    public let result: UInt16
    public let carMAC: Bytes

    public init(result: UInt16, carMAC: Bytes) throws(MessageFormatError) {
        guard carMAC.count == HMACSHA256.byteCount else { throw .invalidField(field: "carMAC", reason: "must be 32 bytes") }
        guard result == 0 || carMAC.allSatisfy({ $0 == 0 }) else {
            throw .invalidField(field: "carMAC", reason: "must be all zero when the result is a fault")
        }
        self.result = result
        self.carMAC = carMAC
    }

    public static func success(carMAC: Bytes) throws(MessageFormatError) -> PairingResultMessage {
        try PairingResultMessage(result: 0, carMAC: carMAC)
    }

    public init(_ fault: FaultCode) {
        result = fault.rawValue
        carMAC = Bytes(repeating: 0, count: HMACSHA256.byteCount)
    }

    public var isSuccess: Bool { result == 0 }
    public var fault: FaultCode? { FaultCode(rawValue: result) }

    public func encoded() -> Bytes {
        var out: Bytes = [MessageType.pairingResult.rawValue, PairingWire.version]
        out.appendBE(result)
        return out + carMAC
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> PairingResultMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.pairingResult)
        _ = try reader.pairingVersion()
        let result = try reader.uint16BE("result")
        let mac = try reader.bytes(HMACSHA256.byteCount, "carMAC")
        try reader.expectEnd()
        return try PairingResultMessage(result: result, carMAC: mac)
    }
}

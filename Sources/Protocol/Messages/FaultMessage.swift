// Fault, car to phone, cleartext: only sent before a session exists (inside a session faults
// travel encrypted in Response.result). Unauthenticated, so a phone treats it as advisory.
//
//   0      type 0x7F
//   1      version 0x01
//   2..3   fault code (UInt16 BE, never 0)

public struct FaultMessage: Equatable, Sendable {
    public static let length = 4
    /// Kept raw so a phone can show a code from a newer car it does not know by name.
    public let code: UInt16

    public init(_ fault: FaultCode) { self.code = fault.rawValue }

    public init(code: UInt16) throws(MessageFormatError) {
        guard code != 0 else { throw .invalidField(field: "faultCode", reason: "0 is not a fault") }
        self.code = code
    }

    public var fault: FaultCode? { FaultCode(rawValue: code) }

    public func encoded() -> Bytes {
        var out: Bytes = [MessageType.fault.rawValue, Wire.version]
        out.appendBE(code)
        return out
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> FaultMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.fault)
        try reader.version()
        let code = try reader.uint16BE("faultCode")
        try reader.expectEnd()
        return try FaultMessage(code: code)
    }
}

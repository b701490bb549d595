// Plaintext of a Response (car to phone, counters 1, 2, ...): the outcome of one command, or
// of a rejected message inside the session.
//
//   0      command (the CommandCode answered; 0x00 when the message could not be read)
//   1..2   result (UInt16 BE: 0 = ok, otherwise a FaultCode)
//   3..4   vehicleState (UInt16 BE bitfield)
//   5..8   carTime (UInt32 BE, the car's session clock)

public struct ResponseBody: Equatable, Sendable {
    public static let length = 9
    /// The command byte used when the car answers a message it could not decrypt or parse.
    public static let noCommand: UInt8 = 0x00

    public let commandByte: UInt8
    public let result: UInt16
    public let vehicleState: VehicleState
    public let carTime: UInt32

    public init(commandByte: UInt8, result: UInt16, vehicleState: VehicleState, carTime: UInt32) {
        self.commandByte = commandByte
        self.result = result
        self.vehicleState = vehicleState
        self.carTime = carTime
    }

    public init(command: CommandCode?, fault: FaultCode?, vehicleState: VehicleState, carTime: UInt32) {
        self.init(commandByte: command?.rawValue ?? ResponseBody.noCommand, result: fault?.rawValue ?? 0,
                  vehicleState: vehicleState, carTime: carTime)
    }

    public var command: CommandCode? { CommandCode(rawValue: commandByte) }
    public var isOK: Bool { result == 0 }
    /// Nil when the result is ok or a code this build does not know.
    public var fault: FaultCode? { FaultCode(rawValue: result) }

    public func encoded() -> Bytes {
        var out: Bytes = [commandByte]
        out.appendBE(result)
        out.appendBE(vehicleState.rawValue)
        out.appendBE(carTime)
        return out
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> ResponseBody {
        var reader = try ByteReader(plaintext: bytes)
        let command = try reader.byte("command")
        let result = try reader.uint16BE("result")
        let state = VehicleState(rawValue: try reader.uint16BE("vehicleState"))
        let carTime = try reader.uint32BE("carTime")
        try reader.expectEnd()
        return ResponseBody(commandByte: command, result: result, vehicleState: state, carTime: carTime)
    }
}

/// The ok answer to rangingCapabilities (0x08, docs/protocol.md 19.2): the nine Response bytes
/// with command 0x08 and result 0, then the car's UWBCapabilities (8 bytes): 17 bytes. Any
/// other answer to 0x08 (a fault) is a plain nine-byte Response.
public struct RangingCapabilitiesAnswer: Equatable, Sendable {
    public static let length = ResponseBody.length + UWBCapabilities.encodedLength

    public let response: ResponseBody
    public let capabilities: UWBCapabilities

    public init(vehicleState: VehicleState, carTime: UInt32, capabilities: UWBCapabilities) {
        response = ResponseBody(command: .rangingCapabilities, fault: nil, vehicleState: vehicleState, carTime: carTime)
        self.capabilities = capabilities
    }

    public func encoded() -> Bytes { response.encoded() + capabilities.encoded() }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> RangingCapabilitiesAnswer {
        guard bytes.count > ResponseBody.length else { throw .truncated(field: "capabilities", needed: length, available: bytes.count) }
        let response = try ResponseBody.decode(Array(bytes[..<ResponseBody.length]))
        guard response.command == .rangingCapabilities, response.isOK else {
            throw .invalidField(field: "result", reason: "only an ok answer to rangingCapabilities carries capabilities")
        }
        let capabilities = try UWBCapabilities.decode(Array(bytes[ResponseBody.length...]))
        return RangingCapabilitiesAnswer(vehicleState: response.vehicleState, carTime: response.carTime, capabilities: capabilities)
    }
}

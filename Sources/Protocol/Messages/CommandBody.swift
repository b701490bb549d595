// Plaintext of a Command (phone to car, counters 1, 2, ...).
//
//   0      command (CommandCode)
//   1..4   expiresAt (UInt32 BE, seconds on the car's session clock)
//   5      argLen
//   6..    args (argLen bytes; no v1 command defines arguments, they are passed through)

public struct CommandBody: Equatable, Sendable {
    public static let fixedLength = 6

    public let command: CommandCode
    public let expiresAt: UInt32
    public let args: Bytes

    public init(command: CommandCode, expiresAt: UInt32, args: Bytes = []) throws(MessageFormatError) {
        guard args.count <= Int(UInt8.max) else {
            throw .invalidField(field: "args", reason: "at most 255 bytes")
        }
        self.command = command
        self.expiresAt = expiresAt
        self.args = args
    }

    public func encoded() -> Bytes {
        var out: Bytes = [command.rawValue]
        out.appendBE(expiresAt)
        out.append(UInt8(args.count))
        out += args
        return out
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> CommandBody {
        var reader = try ByteReader(plaintext: bytes)
        let code = try reader.byte("command")
        guard let command = CommandCode(rawValue: code) else {
            throw .invalidField(field: "command", reason: "unknown command 0x\([code].hexString)")
        }
        let expiresAt = try reader.uint32BE("expiresAt")
        let argLength = Int(try reader.byte("argLen"))
        let args = try reader.bytes(argLength, "args")
        try reader.expectEnd()
        return try CommandBody(command: command, expiresAt: expiresAt, args: args)
    }
}

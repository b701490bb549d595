// `carkey decode HEX`: any protocol message, field by field, for field diagnostics.
import CommandLineKit
import Protocol

extension Command {
    static let decode = Command(
        name: "decode",
        summary: "Decode a protocol message field by field (exit 0 decoded, 1 invalid message, 2 bad hex)",
        discussion: """
            Uses the car's own decoder (docs/protocol.md). Hex may be split over several
            arguments and may contain spaces, colons and a leading 0x. Encrypted records show
            their header only. An undecodable message prints the failing field and its fault.
            A message that decodes but that the car refuses whatever its state (a version 1
            PairingHello, from an app before SPAKE2+) still exits 0, with a line naming the
            refusal: "refused by the car: Fault 35 pairingVersion: ...". The exit status says
            whether the bytes are a well-formed message, not whether the car accepts it.
            """,
        arguments: [Positional("hex", arity: .oneOrMore, help: "The message bytes in hex")],
        exitStatuses: [
            ExitStatus(0, "decoded"),
            ExitStatus(1, "not a valid message: the failing field on stderr"),
            ExitStatus(2, "usage error, hex that is not hex included: one line on stderr"),
        ],
        action: { invocation in
            let text = invocation.arguments.arguments("hex").joined()
            switch MessageDecoder.parseHex(text) {
            case .notHex:
                throw UsageError.invalidValue(HexArguments.abbreviate(text), for: "<hex>", expected: "an even number of hex digits")
            case .longerThanAMessage:
                throw ToolFailure("invalid message: longer than \(Wire.maxMessageLength) bytes [fault malformedMessage]")
            case .bytes(let bytes):
                do throws(MessageFormatError) {
                    print(try MessageDecoder.fieldLines(bytes).joined(separator: "\n"))
                    return 0
                } catch {
                    throw ToolFailure(MessageDecoder.errorLine(error, length: bytes.count))
                }
            }
        }
    )
}

// `carkey crypto verify`: checks an ECDSA P-256/SHA-256 signature, one at a time or in batch.
import CommandLineKit
import Drivers
import Protocol

#if canImport(Glibc)
import Glibc
#endif

extension Command {
    static let crypto = Command(
        name: "crypto",
        summary: "Cryptographic checks for field diagnostics and test tooling",
        subcommands: [.cryptoVerify]
    )

    static let cryptoVerify = Command(
        name: "verify",
        summary: "Verify an ECDSA P-256 SHA-256 signature (exit 0 valid, 1 invalid, 2 usage)",
        discussion: """
            Prints 'valid' or 'invalid: REASON'. With --batch, reads JSON lines
            {"publicKey":HEX,"message":HEX,"signature":HEX,"encoding":"der"|"raw"} from stdin
            and prints one line per input line: valid, invalid: REASON, or error: REASON for a
            line that cannot be parsed; the exit status is 0 only when every line was valid.
            """,
        options: [
            .value("public-key", placeholder: "HEX|@PEMFILE", help: "SEC1 uncompressed key (65 bytes hex) or a PEM file"),
            .value("message", placeholder: "HEX", help: "The signed message"),
            .value("signature", placeholder: "HEX", help: "The signature"),
            .value("encoding", placeholder: "der|raw|auto", help: "Signature encoding (default auto: 64 bytes is raw)"),
            .flag("batch", help: "Read JSON lines from stdin"),
        ],
        exitStatuses: [
            ExitStatus(0, "valid (--batch: every line valid)"),
            ExitStatus(1, "invalid (--batch: any line invalid or unreadable, or no line)"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            if arguments.flag("batch") {
                for name in ["public-key", "message", "signature", "encoding"] where arguments.value(name) != nil {
                    throw UsageError("'--\(name)' cannot be combined with '--batch'")
                }
                return BatchVerifier.run()
            }
            let key = try HexArguments.publicKey(try arguments.require("public-key"), option: "public-key")
            let message = try HexArguments.bytes(arguments, "message")
            let signature = try HexArguments.bytes(arguments, "signature")
            let encodingName = arguments.value("encoding") ?? "auto"
            guard let encoding = SignatureCheck.encoding(named: encodingName, signature: signature) else {
                throw UsageError.invalidValue(encodingName, for: "--encoding", expected: "der, raw or auto")
            }
            if encoding == .raw && signature.count != 64 {
                throw UsageError("'--signature' must be 64 bytes for --encoding raw, got \(signature.count)")
            }
            let verdict = SignatureCheck.verify(key: key, message: message, signature: signature, encoding: encoding)
            print(verdict.line)
            return verdict == .valid ? 0 : 1
        }
    )
}

/// The --batch loop: one bounded line in, one verdict line out, never stopping on bad input.
enum BatchVerifier {
    /// Longest accepted input line; longer lines are answered with an error and skipped.
    static let maximumLineLength = 64 * 1024

    /// One batch line: three hex strings and an optional encoding name (absent or null for
    /// auto); other members are ignored.
    private struct Request {
        let publicKey: String
        let message: String
        let signature: String
        let encoding: String?

        init?(_ line: Bytes) {
            guard case .object(let fields)? = try? JSONTree.parse(line),
                  let publicKey = fields["publicKey"]?.stringValue, let message = fields["message"]?.stringValue,
                  let signature = fields["signature"]?.stringValue else { return nil }
            switch fields["encoding"] {
            case nil, .null?: encoding = nil
            case .string(let name)?: encoding = name
            default: return nil
            }
            (self.publicKey, self.message, self.signature) = (publicKey, message, signature)
        }
    }

    static func run() -> Int32 {
        var allValid = true
        var sawLine = false
        while let line = readBoundedLine() {
            sawLine = true
            let answer = verdict(for: line)
            if answer != "valid" { allValid = false }
            print(answer)
            fflush(nil)
        }
        return sawLine && allValid ? 0 : 1
    }

    static func verdict(for line: LineInput) -> String {
        guard case .line(let bytes) = line else { return "error: line longer than \(maximumLineLength) bytes" }
        guard let request = Request(bytes) else {
            return "error: not a JSON object with publicKey, message, signature (and encoding)"
        }
        guard let keyBytes = Bytes(hex: request.publicKey) else { return "error: publicKey is not hex" }
        guard keyBytes.count == P256PublicKey.sec1Length else { return "error: publicKey must be 65 bytes, got \(keyBytes.count)" }
        guard let message = Bytes(hex: request.message) else { return "error: message is not hex" }
        guard let signature = Bytes(hex: request.signature) else { return "error: signature is not hex" }
        guard let encoding = SignatureCheck.encoding(named: request.encoding ?? "auto", signature: signature) else {
            return "error: encoding must be der or raw"
        }
        let key: P256PublicKey
        do {
            key = try P256PublicKey(sec1: keyBytes)
        } catch {
            return "invalid: \(error)"
        }
        return SignatureCheck.verify(key: key, message: message, signature: signature, encoding: encoding).line
    }

    enum LineInput { case line(Bytes), overlong }

    /// Reads one line from stdin without holding more than the limit in memory.
    static func readBoundedLine() -> LineInput? {
        var bytes = Bytes()
        var overlong = false
        while true {
            let c = getchar()
            if c == EOF { return bytes.isEmpty && !overlong ? nil : (overlong ? .overlong : .line(bytes)) }
            if c == 10 { return overlong ? .overlong : .line(bytes) }
            if bytes.count < maximumLineLength { bytes.append(UInt8(c)) } else { overlong = true }
        }
    }
}

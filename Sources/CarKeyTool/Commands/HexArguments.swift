// Parsing of hex and key arguments shared by the carkey subcommands; errors name the option.
import CommandLineKit
import Drivers
import Protocol

enum HexArguments {
    /// `--name HEX` as bytes; a usage error naming the option when it is not hex.
    static func bytes(_ arguments: ParsedArguments, _ name: String) throws -> Bytes {
        let text = try arguments.require(name)
        guard let bytes = Bytes(hex: text) else {
            throw UsageError.invalidValue(abbreviate(text), for: "--" + name, expected: "an even number of hex digits")
        }
        return bytes
    }

    /// A public key given as SEC1 hex (65 bytes) or `@FILE` holding a PEM public or private key.
    /// Wrong lengths are usage errors; an off-curve point is a `CryptoError` for the caller.
    static func publicKey(_ text: String, option: String) throws -> P256PublicKey {
        if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            let pem: String
            do {
                pem = String(decoding: try Files.read(path, limit: 64 * 1024), as: UTF8.self)
            } catch {
                throw UsageError("cannot read '\(path)' for '--\(option)': \(error)")
            }
            if let key = try? P256PublicKey(pemRepresentation: pem) { return key }
            if let key = try? P256PrivateKey(pemRepresentation: pem) { return key.publicKey }
            throw UsageError("'\(path)' for '--\(option)' holds no PEM P-256 public or private key")
        }
        guard let bytes = Bytes(hex: text) else {
            throw UsageError.invalidValue(abbreviate(text), for: "--" + option, expected: "hex or @PEMFILE")
        }
        guard bytes.count == P256PublicKey.sec1Length else {
            throw UsageError("'--\(option)' must be \(P256PublicKey.sec1Length) bytes (SEC1 uncompressed), got \(bytes.count)")
        }
        return try P256PublicKey(sec1: bytes)
    }

    /// Keeps error lines short when someone pastes a long value.
    static func abbreviate(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(37)) + "..."
    }
}

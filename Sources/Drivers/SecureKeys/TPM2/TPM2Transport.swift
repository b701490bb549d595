// How command bytes reach the TPM and its answer comes back. One command, one response, in
// order: the TPM runs one command at a time, and the device lock serialises callers.
// The "tcti" setting keeps tpm2-tss's syntax so existing configs keep working.
import Protocol

/// The transport failed (no device, connection refused or reset, timeout, a response that is
/// not a TPM response): the TPM is unreachable, not answering with an error.
struct TPM2TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    let detail: String
    var description: String { detail }
}

protocol TPM2Transport: AnyObject {
    /// Sends one complete command and returns the complete response (header included).
    func exchange(_ command: Bytes) throws(TPM2TransportError) -> Bytes
    func close()
}

/// Makes a connection for a parsed setting (tests wrap the real transport).
typealias TPM2Opener = (TPM2TCTI) throws -> any TPM2Transport

/// A parsed "tcti" setting.
enum TPM2TCTI: Equatable, Sendable {
    /// A TPM character device: /dev/tpmrm0 (the kernel's resource manager) by default.
    case device(path: String)
    /// swtpm's TCP server port (raw TPM commands; its control port, P+1, is not needed:
    /// locality 0 is swtpm's default, and the vault never powers the TPM on or off).
    case swtpm(host: String, port: UInt16)

    static let defaultDevice = "/dev/tpmrm0"

    /// Why a setting is refused; one line naming what works instead.
    static func parse(_ text: String) -> Result<TPM2TCTI, TPM2TransportError> {
        let name = text.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        let config = text.count > name.count ? String(text.dropFirst(name.count + 1)) : ""
        switch name {
        case "device":
            let path = config.isEmpty ? defaultDevice : config
            guard path.hasPrefix("/") else { return .failure(TPM2TransportError(detail: "tcti device:\(path): the device path must be absolute")) }
            return .success(.device(path: path))
        case "swtpm":
            var host = "127.0.0.1"
            var port: UInt16 = 2321
            for pair in config.split(separator: ",") where !pair.isEmpty {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { return .failure(TPM2TransportError(detail: "tcti \(text): '\(pair)' is not key=value")) }
                switch parts[0] {
                case "host": host = parts[1] == "localhost" ? "127.0.0.1" : parts[1]
                case "port":
                    guard let value = UInt16(parts[1]), value > 0, value < UInt16.max else {
                        return .failure(TPM2TransportError(detail: "tcti \(text): port must be 1-65534"))
                    }
                    port = value
                default: return .failure(TPM2TransportError(detail: "tcti \(text): unknown key '\(parts[0])' (host, port)"))
                }
            }
            guard TPM2SocketAddress.isNumeric(host) else {
                return .failure(TPM2TransportError(detail: "tcti \(text): host must be an IP address or localhost"))
            }
            return .success(.swtpm(host: host, port: port))
        case "tabrmd":
            return .failure(TPM2TransportError(detail: "tcti \(text): the tpm2-abrmd resource manager needs D-Bus and tpm2-tss, "
                + "which this carkey-agent does not use; use the kernel's resource manager instead: \"tcti\": \"device:/dev/tpmrm0\""))
        case "mssim":
            return .failure(TPM2TransportError(detail: "tcti \(text): the Microsoft simulator's framing is not supported; run swtpm "
                + "(\"swtpm:host=127.0.0.1,port=2321\") or use the board's TPM (\"device:/dev/tpmrm0\")"))
        default:
            return .failure(TPM2TransportError(detail: "tcti \(text): unknown transport (device:PATH or swtpm:host=H,port=P)"))
        }
    }

    func open() throws(TPM2TransportError) -> any TPM2Transport {
        switch self {
        case .device(let path): return try TPM2DeviceFile(path: path)
        case .swtpm(let host, let port): return try TPM2SocketTransport(host: host, port: port)
        }
    }
}

/// The response header both transports read before the rest (Part 1 §18.2: tag UINT16,
/// responseSize UINT32, responseCode UINT32): the size it claims, checked against the limits.
enum TPM2ResponseFrame {
    static let headerSize = 10

    static func size(ofHeader header: Bytes) throws(TPM2TransportError) -> Int {
        var reader = TPM2Reader(header)
        guard let tag = try? reader.u16(), let size = try? reader.u32() else {
            throw TPM2TransportError(detail: "short TPM response header")
        }
        guard tag == TPM2Tag.noSessions || tag == TPM2Tag.sessions || tag == 0x00C4 else {
            throw TPM2TransportError(detail: "not a TPM response (tag 0x\(String(tag, radix: 16)))")
        }
        guard size >= UInt32(headerSize), size <= UInt32(TPM2Limits.maxMessage) else {
            throw TPM2TransportError(detail: "TPM response size \(size) outside \(headerSize)-\(TPM2Limits.maxMessage)")
        }
        return Int(size)
    }
}

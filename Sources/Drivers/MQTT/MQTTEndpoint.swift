// Where the broker is: mqtt://host:port (plain TCP, loopback tests) or mqtts://host:port (TLS).

public struct MQTTEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int32
    public var usesTLS: Bool

    public init(host: String, port: Int32, usesTLS: Bool) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
    }

    /// Why a URL was refused; thrown as `MQTTError.badEndpoint`.
    public enum ParseError: Equatable, Sendable, CustomStringConvertible {
        case unsupportedScheme(String)
        case missingHost
        case badPort(String)
        /// user:password@ in the URL: refused, and never quoted (it would reach process listings,
        /// logs and the outbox's last error).
        case credentialsInURL
        public var description: String {
            switch self {
            case .unsupportedScheme(let s): return "unsupported scheme '\(s)' (use mqtt:// or mqtts://)"
            case .missingHost: return "no host in MQTT URL"
            case .badPort(let p): return "bad port '\(p)' (1-65535)"
            case .credentialsInURL: return "credentials in the MQTT URL are not supported (use a client certificate)"
            }
        }
    }

    /// Parses `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]`; default ports 1883 and 8883.
    /// IPv6 literals go in brackets: mqtt://[::1]:1883.
    public init(url: String) throws(MQTTError) {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtts://") {
            tls = true
            rest = url.dropFirst("mqtts://".count)
        } else if url.hasPrefix("mqtt://") {
            tls = false
            rest = url.dropFirst("mqtt://".count)
        } else {
            let scheme = url.split(separator: ":", maxSplits: 1).first.map(String.init) ?? url
            throw .badEndpoint(.unsupportedScheme(scheme))
        }
        let authority = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard !authority.contains("@") else { throw .badEndpoint(.credentialsInURL) }
        var host = Substring(authority)
        var portText: Substring? = nil
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw .badEndpoint(.missingHost) }
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw .badEndpoint(.badPort(String(after))) }
        } else if let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw .badEndpoint(.missingHost) }
        var port: Int32 = tls ? 8883 : 1883
        if let portText {
            guard let value = Int32(portText), (1...65535).contains(value) else { throw .badEndpoint(.badPort(String(portText))) }
            port = value
        }
        self.init(host: String(host), port: port, usesTLS: tls)
    }

    public var description: String { "\(usesTLS ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

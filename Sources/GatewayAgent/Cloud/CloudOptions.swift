// The cloud link's settings from the command line (and, later, the config file's "mqtt" object).
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers

struct CloudOptions: Equatable {
    /// The broker, or a cluster's nodes tried in turn (1 to 8, all mqtt:// or all mqtts://).
    var endpoints: [MQTTEndpoint]
    var tls: MQTTTLSFiles?
    var keepaliveSeconds: Int32 = CloudOptions.defaultKeepaliveSeconds
    /// The will delay: short blips within it do not publish "lost". Tests set 0.
    var willDelaySeconds: UInt32 = 10
    /// 0: off. Else a QoS 0 heartbeat on vehicles/{id}/heartbeat this often while connected.
    var heartbeatSeconds: UInt32 = 0

    init(endpoints: [MQTTEndpoint], tls: MQTTTLSFiles? = nil, keepaliveSeconds: Int32 = CloudOptions.defaultKeepaliveSeconds, willDelaySeconds: UInt32 = 10,
         heartbeatSeconds: UInt32 = 0) {
        self.endpoints = endpoints
        self.tls = tls
        self.keepaliveSeconds = keepaliveSeconds
        self.willDelaySeconds = willDelaySeconds
        self.heartbeatSeconds = heartbeatSeconds
    }

    init(endpoint: MQTTEndpoint, tls: MQTTTLSFiles? = nil, keepaliveSeconds: Int32 = CloudOptions.defaultKeepaliveSeconds, willDelaySeconds: UInt32 = 10) {
        self.init(endpoints: [endpoint], tls: tls, keepaliveSeconds: keepaliveSeconds, willDelaySeconds: willDelaySeconds)
    }

    /// The first endpoint (where a one-broker setup connects).
    var endpoint: MQTTEndpoint { endpoints[0] }
    /// Whether the endpoints speak TLS (they all do or none does).
    var usesTLS: Bool { endpoints[0].usesTLS }

    static let optionSpecs: [Option] = [
        .value("mqtt", placeholder: "URL", help: "Cloud broker: mqtt://HOST:PORT (loopback tests) or mqtts://HOST:PORT; "
               + "repeat for a cluster's nodes (tried in turn, up to \(maxEndpoints))"),
        .value("mqtt-ca", placeholder: "FILE", help: "CA certificate for mqtts://"),
        .value("mqtt-cert", placeholder: "FILE", help: "Client certificate for mqtts://"),
        .value("mqtt-key", placeholder: "FILE", help: "Client key for mqtts:// (mode 0600)"),
        .value("mqtt-keepalive", placeholder: "SECONDS", help: "MQTT keepalive (default \(defaultKeepaliveSeconds))"),
        .value("mqtt-will-delay", placeholder: "SECONDS", help: "Will delay before 'lost' is published (default 10)"),
        .value("mqtt-heartbeat", placeholder: "SECONDS", help: "Heartbeat on vehicles/{id}/heartbeat every SECONDS (60-86400; default 0, off)"),
    ]

    static let maxEndpoints = 8

    /// What is wrong with a list of endpoints, or nil. TLS files apply to every endpoint, so a
    /// list mixing mqtt:// and mqtts:// is refused rather than guessed at.
    static func endpointsProblem(_ endpoints: [MQTTEndpoint]) -> String? {
        if endpoints.isEmpty { return "at least one broker URL" }
        if endpoints.count > maxEndpoints { return "at most \(maxEndpoints) broker URLs, found \(endpoints.count)" }
        for (index, endpoint) in endpoints.enumerated() where endpoints[..<index].contains(endpoint) {
            return "\(endpoint) is given twice"
        }
        if Set(endpoints.map(\.usesTLS)).count > 1 {
            return "all mqtt:// or all mqtts:// (the TLS files apply to every broker), not a mix"
        }
        return nil
    }

    /// The file's "mqtt" object (if any) with the flags on top; nil: the car runs offline,
    /// which it must always be able to. Repeated --mqtt flags replace the file's URLs as a whole.
    static func parse(_ arguments: ParsedArguments, file: CloudOptions? = nil) throws -> CloudOptions? {
        var options = file
        let urls = arguments.values("mqtt")
        if !urls.isEmpty {
            var endpoints: [MQTTEndpoint] = []
            for url in urls {
                do {
                    endpoints.append(try MQTTEndpoint(url: url))
                } catch MQTTError.badEndpoint(.credentialsInURL) {
                    throw UsageError("--mqtt: \(MQTTError.badEndpoint(.credentialsInURL))")  // the URL is not echoed
                } catch {
                    throw UsageError.invalidValue(url, for: "--mqtt", expected: "\(error)")
                }
            }
            if let problem = endpointsProblem(endpoints) { throw UsageError("--mqtt: \(problem)") }
            options = CloudOptions(endpoints: endpoints, tls: options?.tls, keepaliveSeconds: options?.keepaliveSeconds ?? Self.defaultKeepaliveSeconds,
                                   willDelaySeconds: options?.willDelaySeconds ?? 10, heartbeatSeconds: options?.heartbeatSeconds ?? 0)
        }
        guard var options else {
            for name in ["mqtt-ca", "mqtt-cert", "mqtt-key", "mqtt-keepalive", "mqtt-will-delay", "mqtt-heartbeat"] where arguments.value(name) != nil {
                throw UsageError("'--\(name)' needs '--mqtt'")
            }
            return nil
        }
        let ca = arguments.value("mqtt-ca") ?? options.tls?.caFile
        let cert = arguments.value("mqtt-cert") ?? options.tls?.certificateFile
        let key = arguments.value("mqtt-key") ?? options.tls?.keyFile
        if let problem = Self.tlsProblem(usesTLS: options.usesTLS, ca: ca, cert: cert, key: key) {
            throw UsageError(problem)
        }
        options.tls = options.usesTLS ? MQTTTLSFiles(caFile: ca ?? "", certificateFile: cert, keyFile: key) : nil
        if let keepalive = try arguments.integer("mqtt-keepalive") {
            guard keepaliveRange.contains(keepalive) else {
                throw UsageError.invalidValue(String(keepalive), for: "--mqtt-keepalive", expected: "5 to 3600 seconds")
            }
            options.keepaliveSeconds = Int32(keepalive)
        }
        if let delay = try arguments.integer("mqtt-will-delay") {
            guard willDelayRange.contains(delay) else {
                throw UsageError.invalidValue(String(delay), for: "--mqtt-will-delay", expected: "0 to 3600 seconds")
            }
            options.willDelaySeconds = UInt32(delay)
        }
        if let heartbeat = try arguments.integer("mqtt-heartbeat") {
            guard heartbeat == 0 || heartbeatRange.contains(heartbeat) else {
                throw UsageError.invalidValue(String(heartbeat), for: "--mqtt-heartbeat", expected: "0 (off) or 60 to 86400 seconds")
            }
            options.heartbeatSeconds = UInt32(heartbeat)
        }
        return options
    }

    static let keepaliveRange = 5...3600
    /// 240 s: under the 5-minute idle timeout assumed for carrier NATs (a dropped mapping costs a
    /// reconnect, ~4.3 KB of TLS, as much as ~90 pings), and an idle car's pings stay at 17 KB of
    /// TLS data a day (~73 KB with IP/TCP headers), under the 100 KB budget. At 30 s they were
    /// 138 KB (~590 KB). The price: a silent death is noticed by the broker after ~1.5x this
    /// (plus the will delay) and by the car within ~2x. Measured with `carkey-bench cellular`.
    static let defaultKeepaliveSeconds: Int32 = 240
    static let willDelayRange = 0...3600
    /// Below a minute a heartbeat costs more (cellular bytes, broker load) than it tells.
    static let heartbeatRange = 60...86400

    /// The config file's "mqtt" object: {"url" or "urls", "ca", "cert", "key", "keepaliveSeconds",
    /// "willDelaySeconds", "heartbeatSeconds"}; paths relative to the file's folder. Errors name the key.
    static func read(_ mqtt: ConfigReader, baseDirectory: String) throws(ConfigError) -> CloudOptions {
        let endpoints = try readEndpoints(mqtt)
        let usesTLS = endpoints[0].usesTLS
        let path = { (name: String) throws(ConfigError) -> String? in
            try mqtt.string(name, expected: "a file path") { ConfigPaths.resolve($0, against: baseDirectory) }
        }
        let ca = try path("ca"), cert = try path("cert"), key = try path("key")
        if let problem = tlsProblem(usesTLS: usesTLS, ca: ca, cert: cert, key: key) {
            throw .invalidValue(key: mqtt.key(ca == nil && usesTLS ? "ca" : "cert"), expected: problem)
        }
        var options = CloudOptions(endpoints: endpoints)
        options.tls = usesTLS ? MQTTTLSFiles(caFile: ca ?? "", certificateFile: cert, keyFile: key) : nil
        if let keepalive = try mqtt.integer("keepaliveSeconds", in: Int64(keepaliveRange.lowerBound)...Int64(keepaliveRange.upperBound)) {
            options.keepaliveSeconds = Int32(keepalive)
        }
        if let delay = try mqtt.integer("willDelaySeconds", in: Int64(willDelayRange.lowerBound)...Int64(willDelayRange.upperBound)) {
            options.willDelaySeconds = UInt32(delay)
        }
        if let heartbeat = try mqtt.integer("heartbeatSeconds", in: 0...Int64(heartbeatRange.upperBound),
                                            expected: "0 (off) or an integer from 60 to 86400") {
            guard heartbeat == 0 || heartbeatRange.contains(heartbeat) else {
                throw .invalidValue(key: mqtt.key("heartbeatSeconds"), expected: "0 (off) or an integer from 60 to 86400")
            }
            options.heartbeatSeconds = UInt32(heartbeat)
        }
        return options
    }

    /// "url" (one broker) or "urls" (a cluster's nodes), not both.
    private static func readEndpoints(_ mqtt: ConfigReader) throws(ConfigError) -> [MQTTEndpoint] {
        let wording = "mqtt://HOST:PORT or mqtts://HOST:PORT"
        if mqtt.has("url") && mqtt.has("urls") {
            throw .invalidValue(key: mqtt.key("urls"), expected: "either \"url\" or \"urls\" in \"mqtt\", not both")
        }
        if let endpoint = try mqtt.string("url", expected: wording, { try? MQTTEndpoint(url: $0) }) { return [endpoint] }
        guard let value = mqtt.fields["urls"] else {
            throw .invalidValue(key: mqtt.key("url"), expected: "\(wording) (\"url\" or \"urls\" is required in \"mqtt\")")
        }
        let listWording = "an array of 1 to \(maxEndpoints) URLs (\(wording))"
        guard case .array(let items) = value else { throw .invalidValue(key: mqtt.key("urls"), expected: "\(listWording), found \(value.typeName)") }
        var endpoints: [MQTTEndpoint] = []
        for (index, item) in items.enumerated() {
            // The URL itself is not quoted: it could carry credentials.
            guard case .string(let text) = item, let endpoint = try? MQTTEndpoint(url: text) else {
                throw .invalidValue(key: mqtt.key("urls[\(index)]"), expected: wording)
            }
            endpoints.append(endpoint)
        }
        if let problem = endpointsProblem(endpoints) { throw .invalidValue(key: mqtt.key("urls"), expected: problem) }
        return endpoints
    }

    /// Refuses, at start-up, TLS files the agent cannot read. libmosquitto reports a missing
    /// or unreadable CA file only as "Invalid function arguments" when it first connects, naming
    /// no file; this names the setting (the flag if given, else the config key) and the path.
    /// Read through Files.read, so a FIFO or a huge file is refused too, without blocking.
    func checkTLSFilesReadable(_ arguments: ParsedArguments) throws {
        guard let tls else { return }
        let files: [(flag: String, key: String, what: String, path: String?)] = [
            ("mqtt-ca", "mqtt.ca", "CA file", tls.caFile),
            ("mqtt-cert", "mqtt.cert", "client certificate", tls.certificateFile),
            ("mqtt-key", "mqtt.key", "client key", tls.keyFile),
        ]
        for file in files {
            guard let path = file.path else { continue }
            let setting = arguments.value(file.flag) != nil ? "--\(file.flag)" : "'\(file.key)' in the config file"
            do {
                _ = try Files.read(path, limit: Self.maxTLSFileBytes)
            } catch {
                throw UsageError("\(setting): cannot read the \(file.what) \(path): \(Self.readFailure(error))")
            }
        }
    }

    /// PEM bundles are kilobytes; a system CA bundle is about 200 KiB.
    static let maxTLSFileBytes = 1 << 20

    /// A read failure in a few words ("No such file or directory", "permission denied").
    private static func readFailure(_ error: Error) -> String {
        if let failure = error as? FileReadError {
            switch failure {
            case .notRegularFile(_, let kind): return "it is \(kind), not a regular file"
            case .tooLarge(_, let limit): return "larger than \(limit) bytes"
            }
        }
        if let errno = error as? Errno { return String(cString: strerror(errno.rawValue)) }
        return "\(error)"
    }

    /// What is wrong with the TLS files for this URL scheme, or nil.
    static func tlsProblem(usesTLS: Bool, ca: String?, cert: String?, key: String?) -> String? {
        if usesTLS {
            if ca == nil { return "mqtts:// needs a CA file (--mqtt-ca or mqtt.ca)" }
            if (cert == nil) != (key == nil) { return "the client certificate and key go together (--mqtt-cert/--mqtt-key or mqtt.cert/mqtt.key)" }
        } else if ca != nil || cert != nil || key != nil {
            return "TLS files given for a plain mqtt:// URL (use mqtts://)"
        }
        return nil
    }
}

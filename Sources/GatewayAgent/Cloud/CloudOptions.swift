// The cloud link's settings from the command line (and, later, the config file's "mqtt" object).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CommandLineKit
import Drivers

struct CloudOptions: Equatable {
    var endpoint: MQTTEndpoint
    var tls: MQTTTLSFiles?
    var keepaliveSeconds: Int32 = 30
    /// The will delay: short blips within it do not publish "lost". Tests set 0.
    var willDelaySeconds: UInt32 = 10

    static let optionSpecs: [Option] = [
        .value("mqtt", placeholder: "URL", help: "Cloud broker: mqtt://HOST:PORT (loopback tests) or mqtts://HOST:PORT"),
        .value("mqtt-ca", placeholder: "FILE", help: "CA certificate for mqtts://"),
        .value("mqtt-cert", placeholder: "FILE", help: "Client certificate for mqtts://"),
        .value("mqtt-key", placeholder: "FILE", help: "Client key for mqtts:// (mode 0600)"),
        .value("mqtt-keepalive", placeholder: "SECONDS", help: "MQTT keepalive (default 30)"),
        .value("mqtt-will-delay", placeholder: "SECONDS", help: "Will delay before 'lost' is published (default 10)"),
    ]

    /// The file's "mqtt" object (if any) with the flags on top; nil: the car runs offline,
    /// which it must always be able to.
    static func parse(_ arguments: ParsedArguments, file: CloudOptions? = nil) throws -> CloudOptions? {
        var options = file
        if let url = arguments.value("mqtt") {
            do {
                let endpoint = try MQTTEndpoint(url: url)
                options = CloudOptions(endpoint: endpoint, tls: options?.tls, keepaliveSeconds: options?.keepaliveSeconds ?? 30,
                                       willDelaySeconds: options?.willDelaySeconds ?? 10)
            } catch MQTTEndpoint.ParseError.credentialsInURL {
                throw UsageError("--mqtt: \(MQTTEndpoint.ParseError.credentialsInURL)")  // the URL is not echoed
            } catch {
                throw UsageError.invalidValue(url, for: "--mqtt", expected: "\(error)")
            }
        }
        guard var options else {
            for name in ["mqtt-ca", "mqtt-cert", "mqtt-key", "mqtt-keepalive", "mqtt-will-delay"] where arguments.value(name) != nil {
                throw UsageError("'--\(name)' needs '--mqtt'")
            }
            return nil
        }
        let ca = arguments.value("mqtt-ca") ?? options.tls?.caFile
        let cert = arguments.value("mqtt-cert") ?? options.tls?.certificateFile
        let key = arguments.value("mqtt-key") ?? options.tls?.keyFile
        if let problem = Self.tlsProblem(usesTLS: options.endpoint.usesTLS, ca: ca, cert: cert, key: key) {
            throw UsageError(problem)
        }
        options.tls = options.endpoint.usesTLS ? MQTTTLSFiles(caFile: ca ?? "", certificateFile: cert, keyFile: key) : nil
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
        return options
    }

    static let keepaliveRange = 5...3600
    static let willDelayRange = 0...3600

    /// The config file's "mqtt" object: {"url", "ca", "cert", "key", "keepaliveSeconds",
    /// "willDelaySeconds"}; paths relative to the file's folder. Errors name the key.
    static func read(_ mqtt: ConfigReader, baseDirectory: String) throws(ConfigError) -> CloudOptions {
        guard let endpoint = try mqtt.string("url", expected: "mqtt://HOST:PORT or mqtts://HOST:PORT", { try? MQTTEndpoint(url: $0) }) else {
            throw .invalidValue(key: mqtt.key("url"), expected: "mqtt://HOST:PORT or mqtts://HOST:PORT (required in \"mqtt\")")
        }
        let path = { (name: String) throws(ConfigError) -> String? in
            try mqtt.string(name, expected: "a file path") { ConfigPaths.resolve($0, against: baseDirectory) }
        }
        let ca = try path("ca"), cert = try path("cert"), key = try path("key")
        if let problem = tlsProblem(usesTLS: endpoint.usesTLS, ca: ca, cert: cert, key: key) {
            throw .invalidValue(key: mqtt.key(ca == nil && endpoint.usesTLS ? "ca" : "cert"), expected: problem)
        }
        var options = CloudOptions(endpoint: endpoint)
        options.tls = endpoint.usesTLS ? MQTTTLSFiles(caFile: ca ?? "", certificateFile: cert, keyFile: key) : nil
        if let keepalive = try mqtt.integer("keepaliveSeconds", in: Int64(keepaliveRange.lowerBound)...Int64(keepaliveRange.upperBound)) {
            options.keepaliveSeconds = Int32(keepalive)
        }
        if let delay = try mqtt.integer("willDelaySeconds", in: Int64(willDelayRange.lowerBound)...Int64(willDelayRange.upperBound)) {
            options.willDelaySeconds = UInt32(delay)
        }
        return options
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

// The cloud link's settings from the command line (and, later, the config file's "mqtt" object).
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

    /// nil when no --mqtt was given (the car runs offline, which it must always be able to).
    static func parse(_ arguments: ParsedArguments) throws -> CloudOptions? {
        guard let url = arguments.value("mqtt") else {
            for name in ["mqtt-ca", "mqtt-cert", "mqtt-key", "mqtt-keepalive", "mqtt-will-delay"] where arguments.value(name) != nil {
                throw UsageError("'--\(name)' needs '--mqtt'")
            }
            return nil
        }
        let endpoint: MQTTEndpoint
        do {
            endpoint = try MQTTEndpoint(url: url)
        } catch {
            throw UsageError.invalidValue(url, for: "--mqtt", expected: "\(error)")
        }
        var options = CloudOptions(endpoint: endpoint)
        if endpoint.usesTLS {
            guard let ca = arguments.value("mqtt-ca") else { throw UsageError("'--mqtt mqtts://...' needs '--mqtt-ca'") }
            let cert = arguments.value("mqtt-cert"), key = arguments.value("mqtt-key")
            guard (cert == nil) == (key == nil) else { throw UsageError("'--mqtt-cert' and '--mqtt-key' go together") }
            options.tls = MQTTTLSFiles(caFile: ca, certificateFile: cert, keyFile: key)
        } else if arguments.value("mqtt-ca") != nil || arguments.value("mqtt-cert") != nil {
            throw UsageError("TLS files given for a plain mqtt:// URL (use mqtts://)")
        }
        if let keepalive = try arguments.integer("mqtt-keepalive") {
            guard (5...3600).contains(keepalive) else {
                throw UsageError.invalidValue(String(keepalive), for: "--mqtt-keepalive", expected: "5 to 3600 seconds")
            }
            options.keepaliveSeconds = Int32(keepalive)
        }
        if let delay = try arguments.integer("mqtt-will-delay") {
            guard (0...3600).contains(delay) else {
                throw UsageError.invalidValue(String(delay), for: "--mqtt-will-delay", expected: "0 to 3600 seconds")
            }
            options.willDelaySeconds = UInt32(delay)
        }
        return options
    }
}

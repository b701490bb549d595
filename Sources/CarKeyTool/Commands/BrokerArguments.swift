// The broker options of `command send` and `audit verify`, named as the agent's (`carkey-agent
// run --mqtt-ca/--mqtt-cert/--mqtt-key`): the brokers docs/cloud.md describes speak TLS and
// want a client certificate, so a tool that only knew a URL could not reach them. Credentials
// travel in certificates only, as for the car: a user:password@ URL is refused, never echoed.
import CommandLineKit
import Drivers

enum BrokerArguments {
    static let options: [Option] = [
        .value("mqtt", aliases: ["url"], placeholder: "mqtt://HOST:PORT", help: "The broker (mqtts://HOST:PORT for TLS)"),
        .value("mqtt-ca", placeholder: "FILE", help: "CA certificate for mqtts:// (required with it)"),
        .value("mqtt-cert", placeholder: "FILE", help: "Client certificate for mqtts:// (with --mqtt-key)"),
        .value("mqtt-key", placeholder: "FILE", help: "Client key for mqtts:// (with --mqtt-cert)"),
    ]

    /// The connect options for `url` and the TLS flags, or a usage error naming the flag.
    /// Files are read once here, so a missing one is named before any connection is tried
    /// (libmosquitto would only say "Invalid function arguments").
    static func connectOptions(_ arguments: ParsedArguments, url: String, clientID: String) throws -> MQTTConnectOptions {
        let endpoint: MQTTEndpoint
        do {
            endpoint = try MQTTEndpoint(url: url)
        } catch MQTTError.badEndpoint(.credentialsInURL) {
            throw UsageError("'--mqtt': \(MQTTError.badEndpoint(.credentialsInURL))")
        } catch {
            throw UsageError.invalidValue(url, for: "--mqtt", expected: "a broker URL, mqtt://HOST:PORT or mqtts://HOST:PORT (\(error))")
        }
        let ca = arguments.value("mqtt-ca"), cert = arguments.value("mqtt-cert"), key = arguments.value("mqtt-key")
        if endpoint.usesTLS {
            guard ca != nil else { throw UsageError("'--mqtt' mqtts:// needs '--mqtt-ca FILE'") }
            guard (cert == nil) == (key == nil) else { throw UsageError("'--mqtt-cert' and '--mqtt-key' go together") }
        } else if let name = ["mqtt-ca", "mqtt-cert", "mqtt-key"].first(where: { arguments.value($0) != nil }) {
            throw UsageError("'--\(name)' is for an mqtts:// broker, and '--mqtt' is mqtt://")
        }
        for (name, path) in [("mqtt-ca", ca), ("mqtt-cert", cert), ("mqtt-key", key)] {
            guard let path else { continue }
            do { _ = try Files.read(path, limit: 1 << 20) } catch {
                throw UsageError("cannot read '\(path)' for '--\(name)': \(error)")
            }
        }
        let tls = endpoint.usesTLS ? MQTTTLSFiles(caFile: ca ?? "", certificateFile: cert, keyFile: key) : nil
        return MQTTConnectOptions(endpoint: endpoint, clientID: clientID, sessionExpirySeconds: 0, tls: tls)
    }
}

// mosquitto as a TestBroker. Anonymous clients are allowed, so a back-end client only needs a
// user name when the ACL file names one ("user backend"); with TLS it needs a certificate.
import Drivers

extension MosquittoBroker: TestBroker {
    public var brokerName: String { "mosquitto" }

    /// The user name back-end clients connect with (an acl_file may grant it everything with
    /// "user backend" / "topic readwrite #"; without a password file any password is accepted).
    public static let backendUser = "backend"

    public var backendCLIArguments: [String] {
        var arguments = ["-h", "127.0.0.1", "-p", String(port)]
        if let pki, let client = try? pki.clientCertificate(commonName: Self.backendUser) {
            arguments += ["--cafile", pki.caFile, "--cert", client.certificate, "--key", client.key]
        } else {
            arguments += ["-u", Self.backendUser]
        }
        return arguments
    }

    public func backendOptions(clientID: String, sessionExpirySeconds: UInt32) -> MQTTConnectOptions {
        var options = MQTTConnectOptions(endpoint: MQTTEndpoint(host: "127.0.0.1", port: port, usesTLS: pki != nil), clientID: clientID,
                                         keepaliveSeconds: 10, sessionExpirySeconds: sessionExpirySeconds)
        if let pki, let client = try? pki.clientCertificate(commonName: Self.backendUser) {
            options.tls = MQTTTLSFiles(caFile: pki.caFile, certificateFile: client.certificate, keyFile: client.key)
        } else {
            options.username = Self.backendUser
        }
        return options
    }

    public func agentArguments(vehicleID: String) throws -> [String] {
        guard let pki else { return ["--mqtt", url] }
        let client = try pki.clientCertificate(commonName: vehicleID)
        return ["--mqtt", url, "--mqtt-ca", pki.caFile, "--mqtt-cert", client.certificate, "--mqtt-key", client.key]
    }

    public var publishRefusedReasonCode: Int32 { 0x87 }
    public var subscribeRefusedReasonCode: Int32? { nil }
}

// The fleet run's brokers as the ejabberd cluster (EjabberdBroker.swift): every node on the
// TLS listener, each car authenticated by its own client certificate (CN = vehicle ID = client
// ID, which is how ejabberd accepts a certificate), and the back end as a registered user with
// a password on the plain listener.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

public final class EjabberdFleetBrokers: FleetBrokerSet {
    private let cluster: EjabberdCluster

    public init(nodes: Int = 2) throws {
        cluster = try EjabberdCluster(nodes: nodes)
        try cluster.start()  // registers the back-end user
    }

    public var kind: String { "ejabberd-cluster" }
    public var nodeURLs: [String] { cluster.nodes.map(\.tlsURL) }
    public var isCluster: Bool { true }

    public func carArguments(vehicleID: String, folder: String) throws -> [String] {
        let files = try cluster.pki.clientCertificate(commonName: vehicleID)
        return ["--mqtt-ca", cluster.pki.caFile, "--mqtt-cert", files.certificate, "--mqtt-key", files.key]
    }

    public func backendOptions(node: Int, clientID: String) throws -> MQTTConnectOptions {
        MQTTConnectOptions(endpoint: try MQTTEndpoint(url: cluster.nodes[node].url), clientID: clientID,
                           keepaliveSeconds: 10, sessionExpirySeconds: 3600,
                           username: cluster.backendUser, password: cluster.backendPassword)
    }

    public func kill9(node: Int) { cluster.nodes[node].kill9() }
    public func restart(node: Int) throws { try cluster.nodes[node].restart() }
    public func rssKB(node: Int) -> Int? { cluster.nodes[node].rssKB() }
    public func logTail(node: Int) -> String { cluster.nodes[node].logTail }
    public func stop() { cluster.stop() }
}

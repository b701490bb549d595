// The brokers a fleet run talks to, behind one small interface: the node URLs cars connect to,
// the extra agent flags a car needs (TLS files), how the back end connects, and the two things
// the run does to a node midway (kill -9, restart) and measures (resident memory). The fleet
// test runs against the 2-node ejabberd cluster (FleetEjabberd.swift); two independent
// mosquitto brokers (below) stand in where ejabberd is not installed, so the harness itself can
// be exercised anywhere.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

public protocol FleetBrokerSet: AnyObject {
    /// "ejabberd-cluster" or "mosquitto-pair", for the report.
    var kind: String { get }
    /// Plain or TLS URL of each node, in node order.
    var nodeURLs: [String] { get }
    /// True when the nodes route to each other (one back-end subscription sees every car).
    var isCluster: Bool { get }
    /// Agent flags that go with `--mqtt` for this car (e.g. --mqtt-ca/--mqtt-cert/--mqtt-key).
    func carArguments(vehicleID: String, folder: String) throws -> [String]
    /// How the back end connects to node `node`.
    func backendOptions(node: Int, clientID: String) throws -> MQTTConnectOptions
    func kill9(node: Int)
    func restart(node: Int) throws
    /// Resident memory of the node's OS process in KiB (nil when it is not running).
    func rssKB(node: Int) -> Int?
    /// The end of the node's own log, for a failure message ("" when there is none).
    func logTail(node: Int) -> String
    func stop()
}

/// Two unrelated mosquitto brokers: no routing between them, so the back end subscribes on
/// both, and a message a killed broker had not yet handed on is lost with it (mosquitto writes
/// its persistence file once a second). Good enough to exercise the harness, not for figures.
public final class MosquittoFleetBrokers: FleetBrokerSet {
    private var brokers: [MosquittoBroker]

    public init(nodes: Int = 2) throws {
        brokers = try (0..<nodes).map { _ in try MosquittoBroker() }
        for broker in brokers { try broker.start() }
    }

    public var kind: String { "mosquitto-pair" }
    public var nodeURLs: [String] { brokers.map(\.url) }
    public var isCluster: Bool { false }

    public func carArguments(vehicleID: String, folder: String) throws -> [String] { [] }

    public func backendOptions(node: Int, clientID: String) throws -> MQTTConnectOptions {
        MQTTConnectOptions(endpoint: try MQTTEndpoint(url: brokers[node].url), clientID: clientID,
                           keepaliveSeconds: 10, sessionExpirySeconds: 3600)
    }

    public func kill9(node: Int) { brokers[node].stop(signal: SIGKILL) }

    public func restart(node: Int) throws { try brokers[node].start() }

    public func rssKB(node: Int) -> Int? {
        let pid = brokers[node].pid
        guard pid != 0, let sample = ProcessStats.sample(pid) else { return nil }
        return sample.residentBytes / 1024
    }

    public func logTail(node: Int) -> String { "" }

    public func stop() { for broker in brokers { broker.stop() } }
}

/// Which brokers a fleet run uses: CARKEY_FLEET_BROKER=ejabberd|mosquitto, else the ejabberd
/// cluster when it is installed and mosquitto otherwise (said in the report's "brokers"; with
/// CARKEY_REQUIRE_ARTIFACTS=1 a missing ejabberd is an error instead).
public enum FleetBrokerFactory {
    public static func make(nodes: Int = 2) throws -> FleetBrokerSet {
        let wanted = getenv("CARKEY_FLEET_BROKER").map { String(cString: $0) }
        switch wanted {
        case "mosquitto": return try MosquittoFleetBrokers(nodes: nodes)
        case "ejabberd": return try EjabberdFleetBrokers(nodes: nodes)
        default:
            if EjabberdCluster.isInstalled { return try EjabberdFleetBrokers(nodes: nodes) }
            // CI requires the real cluster: no silent fallback to figures from mosquitto.
            if getenv("CARKEY_REQUIRE_ARTIFACTS").map({ String(cString: $0) }) == "1" {
                throw EjabberdCluster.Failure.notInstalled(EjabberdCluster.unusableReason ?? "unknown")
            }
            return try MosquittoFleetBrokers(nodes: nodes)
        }
    }
}

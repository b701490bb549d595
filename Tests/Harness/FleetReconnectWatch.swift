// Which cars lost their broker connection after a moment (a node's kill or restart) and when
// each was connected again, read from the agents' own logs ("cloud: connection lost" and
// "cloud: connected" lines counted against a snapshot taken at that moment). Polled by the
// fleet test every 100 ms, so times are good to about a tenth of a second.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Drivers

public final class FleetReconnectWatch {
    public let since: Double
    private let connectionsBefore: [Int]
    private let lossesBefore: [Int]
    /// Indices of cars that logged a loss after `since`.
    public private(set) var affected = Set<Int>()
    /// Affected cars not connected again yet.
    public private(set) var pending = Set<Int>()
    /// When each affected car was seen connected again.
    public private(set) var backAt: [Int: Double] = [:]

    public init(cars: [FleetCar], at since: Double) {
        self.since = since
        connectionsBefore = cars.map(\.connections)
        lossesBefore = cars.map(\.losses)
    }

    /// Cars that were still pending in an earlier watch (they reconnect during this one).
    public func adopt(_ indices: Set<Int>) {
        affected.formUnion(indices)
        pending.formUnion(indices)
    }

    public func poll(_ cars: [FleetCar], now: Double) {
        for car in cars where !affected.contains(car.index) && car.losses > lossesBefore[car.index] {
            affected.insert(car.index)
            pending.insert(car.index)
        }
        for index in pending where cars[index].connections > connectionsBefore[index] {
            pending.remove(index)
            backAt[index] = now
        }
    }

    /// Every car that lost the connection is back (2 s after the moment, by which time every
    /// car on a killed node has noticed: the kernel resets its socket).
    public func settled(now: Double) -> Bool { now > since + 2 && pending.isEmpty }

    /// Seconds from the moment until the last affected car was back (0 when none was affected).
    public var seconds: Double? {
        guard pending.isEmpty else { return nil }
        return backAt.values.max().map { $0 - since } ?? 0
    }
}

/// Restarts a node on a thread of its own, so the test keeps polling the cars (and timing the
/// storm) while the restart, which waits for the node to rejoin, is under way.
public final class FleetRestart: @unchecked Sendable {
    // @unchecked: `brokers` is touched by the restart thread only until `finished` is set.
    private let brokers: FleetBrokerSet
    private let node: Int
    private let state = Mutex<(finished: Bool, error: String?)>((false, nil))
    private var thread: SystemThread?

    public init(_ brokers: FleetBrokerSet, node: Int) {
        self.brokers = brokers
        self.node = node
        thread = HarnessThread.start(self) { restart in
            var failure: String?
            do { try restart.brokers.restart(node: restart.node) } catch { failure = "\(error)" }
            restart.state.withLock { $0 = (true, failure) }
        }
    }

    public var finished: Bool { state.withLock { $0.finished } }

    /// Waits for the restart to end; its error, if any.
    public func join() -> String? {
        thread?.join()
        thread = nil
        return state.withLock { $0.error }
    }
}

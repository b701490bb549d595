// Thin I/O shells over the sans-IO cores: they own a control socket, feed it events and send
// what the core asks for. A poll loop waits on `descriptor` with `pollTimeoutMillis`.

/// AdapterController on a live control socket.
public final class ManagedAdapter {
    public let socket: MgmtSocket
    public private(set) var controller: AdapterController
    private let clock: any MonotonicClock
    /// Events that did not parse (skipped; a steady rise means a kernel/codec mismatch).
    public private(set) var malformedEvents = 0

    public init(configuration: AdapterConfiguration, socket: MgmtSocket, clock: any MonotonicClock = SystemClock()) throws(MgmtError) {
        self.controller = try AdapterController(configuration: configuration)
        self.socket = socket
        self.clock = clock
    }

    public var descriptor: FileDescriptor { socket.descriptor }
    public var state: AdapterState { controller.state }

    public func start() { controller.start(nowMillis: clock.nowMillis()) }

    public func replaceAdvertisingData(_ data: [UInt8]) throws(MgmtError) { try controller.replaceAdvertisingData(data) }

    public func requestConnectionInformation(address: BluetoothAddress, type: BluetoothAddressType) {
        controller.requestConnectionInformation(address: address, type: type)
    }

    public func disconnect(address: BluetoothAddress, type: BluetoothAddressType) {
        controller.disconnect(address: address, type: type)
    }

    @discardableResult
    public func cancelDisconnect(address: BluetoothAddress, type: BluetoothAddressType) -> Bool {
        controller.cancelDisconnect(address: address, type: type)
    }

    /// Call when the socket is readable or the poll timeout passed: reads events, sends the next
    /// command, returns what happened.
    public func service() throws(BluetoothSocketError) -> [AdapterReport] {
        for event in try socket.receiveEvents(malformed: &malformedEvents) {
            controller.receive(event, nowMillis: clock.nowMillis())
        }
        let now = clock.nowMillis()
        controller.tick(nowMillis: now)
        // At most one per lane (upkeep, disconnects). A full socket buffer leaves a command
        // unanswered; its timeout deals with it.
        while let command = controller.nextCommand(nowMillis: now) {
            try socket.send(command)
        }
        return controller.takeReports()
    }

    /// Milliseconds until `service` has timed work; -1 when only events matter.
    public var pollTimeoutMillis: Int32 {
        guard let deadline = controller.nextDeadlineMillis else { return -1 }
        let now = clock.nowMillis()
        return deadline <= now ? 0 : Int32(min(deadline - now, 60_000))
    }

    /// Stops advertising before the agent exits: the kernel keeps a management instance after
    /// its socket closes, and phones would keep connecting to a car nobody serves. Bounded: waits
    /// at most `timeoutMillis` for the answer, and a failure only costs the stale advertisement.
    @discardableResult
    public func withdrawAdvertising(timeoutMillis: Int32 = 500) -> Bool {
        guard let index = controller.state.index, controller.state.powered else { return false }
        let command = MgmtCommand.removeAdvertising(instance: controller.configuration.instance, index: index)
        guard (try? socket.send(command)) == true else { return false }
        // Counted in poll slices, not with the injected clock: a test's clock may stand still.
        for _ in 0..<max(1, timeoutMillis / 50) {
            guard let ready = try? Poll.wait([(descriptor, .readable)], timeoutMillis: 50) else { return false }
            if ready.first?.isEmpty ?? true { continue }
            guard let events = try? socket.receiveEvents(malformed: &malformedEvents) else { return false }
            for event in events where event.controllerIndex == index {
                switch event.body {
                case .commandComplete(let opcode, let status, _) where opcode == command.opcode.rawValue,
                     .commandStatus(let opcode, let status) where opcode == command.opcode.rawValue:
                    return status == .success
                default:
                    continue
                }
            }
        }
        return false
    }

    public func close() { socket.close() }
}

/// ScannerCore on a live control socket (phone side, tests, field tools).
public final class ManagementScanner {
    public let socket: MgmtSocket
    public private(set) var core: ScannerCore
    private let clock: any MonotonicClock
    public private(set) var malformedEvents = 0

    public init(index: UInt16, socket: MgmtSocket, clock: any MonotonicClock = SystemClock()) {
        self.core = ScannerCore(index: index)
        self.socket = socket
        self.clock = clock
    }

    public var descriptor: FileDescriptor { socket.descriptor }

    public func start() { core.start() }
    public func stop() { core.stop() }

    /// Reads events, sends a start/stop if one is due, returns advertisements seen.
    public func service() throws(BluetoothSocketError) -> [ScannedAdvertisement] {
        for event in try socket.receiveEvents(malformed: &malformedEvents) {
            core.receive(event, nowMillis: clock.nowMillis())
        }
        if let command = core.nextCommand(nowMillis: clock.nowMillis()) { try socket.send(command) }
        return core.takeAdvertisements()
    }

    /// Blocking: scans for `millis` and returns every advertisement seen.
    public func scan(forMillis millis: UInt64) throws(BluetoothSocketError) -> [ScannedAdvertisement] {
        start()
        let end = clock.nowMillis() + millis
        var seen = try service()
        while clock.nowMillis() < end {
            let wait = Int32(min(end - clock.nowMillis(), 250))
            do throws(Errno) { _ = try Poll.wait([(descriptor, .readable)], timeoutMillis: wait) } catch { throw .from(error) }
            seen += try service()
        }
        stop()
        _ = try service()
        return seen
    }

    public func close() { socket.close() }
}

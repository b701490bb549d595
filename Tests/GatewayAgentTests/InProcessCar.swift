// The agent's real loop in process, driven round by round: a real store in a temporary folder
// (behind a writer the test can look through while a commit runs, or make fail), the real
// engine and KeyService, the link server on a Unix socket, the simulated chip's body, and
// phones that talk the real protocol over real sockets. Single thread: the test runs rounds
// until what it waits for has happened.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent
#if canImport(Glibc)
import Glibc
#endif

/// The store's batch writer with a window on each commit.
final class ProbingWriter: AuditLogWriter {
    let store: CarStore
    /// Runs just before a batch is written (throw to make the commit fail).
    var beforeCommit: (([NewEvent]) throws -> Void)?
    private(set) var committed: [[NewEvent]] = []

    init(store: CarStore) { self.store = store }

    func appendEvents(_ events: [NewEvent]) throws {
        try beforeCommit?(events)
        try store.appendEvents(events)
        committed.append(events)
    }
}

/// Sees the commands the service starts (and what the world looked like at that moment).
final class ObservingActuator: VehicleActuator {
    let inner: any VehicleActuator
    var onStart: ((CommandRequest) -> Void)?

    init(_ inner: any VehicleActuator) { self.inner = inner }

    var state: VehicleState { inner.state }

    func start(_ request: CommandRequest) -> CommandOutcome? {
        onStart?(request)
        return inner.start(request)
    }
}

final class InProcessCar {
    let vehicle = try! VehicleID("OCK-UNIT-0009")
    let identity = try! P256PrivateKey.generate()
    let folder: String
    let store: CarStore
    let writer: ProbingWriter
    let clock = AgentClock(systemSynchronized: { false })
    let server: any LinkServer
    /// The in-memory twin when the car was made with `memoryLinks` (phones are `MemoryPhone`s).
    let memory: MemoryLinkServer?
    let hardware: VehicleHardware
    let body: VehicleBody
    let actuator: ObservingActuator
    let keys: KeyService
    let service: CarService
    let loop: AgentLoop
    private var nextTick: UInt64
    private var stopped = false
    private let savedThreshold = LogLevel.threshold

    var chip: SimulatedGPIO { hardware.simulated! }
    var socketPath: String { folder + "/ble.sock" }

    /// `keys`: records put in the keychain before start-up.
    /// `memoryLinks`: the in-memory link server instead of the Unix-socket simulator.
    init(keys: [KeyRecord], coalescer: AuditCoalescer = AuditCoalescer(), memoryLinks: Bool = false) throws {
        LogLevel.threshold = .warn // thousands of audit lines otherwise
        folder = AgentTestSupport.temporaryDirectory()
        store = try CarStore.open(stateDirectory: folder + "/state")
        try store.write { try $0.persist(keys.map { .putKey($0) }) }
        writer = ProbingWriter(store: store)
        let log = AgentLog(prefix: "test")
        let keyService = try KeyService.load(store: store, capacity: Keychain.defaultCapacity, clock: clock, log: log)
        self.keys = keyService
        let engine = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: vehicle), identity: identity,
                                       keys: keyService.directory, certificateVerifier: keyService.certificateVerifier)
        // One spare slot, as the product's link backends have (CarService decides who keeps it).
        memory = memoryLinks ? MemoryLinkServer(spareSlots: 1) : nil
        server = try memory ?? SimulatedLinkServer(configuration: .init(socketPath: folder + "/ble.sock"))
        hardware = try VehicleHardware.open(boardFile: nil, simulate: true, clock: SystemClock())
        body = try VehicleBody(hardware: hardware, store: store, clock: clock, log: log)
        actuator = ObservingActuator(body.actuator)
        service = CarService(engine: engine, server: server, actuator: actuator, keys: keyService,
                             audit: AuditSink(writer: writer, log: log, coalescer: coalescer), clock: clock, log: log)
        body.connect(service)
        loop = AgentLoop(service: service, server: server, signals: nil, clock: clock, log: log, sources: body.sources)
        nextTick = clock.monotonicMillis + AgentLoop.tickMillis
    }

    /// Stops as `carkey-agent run` does (running pulse answered, links closed, rows committed).
    func stop() {
        guard !stopped else { return }
        stopped = true
        body.finishRunning()
        service.shutdown()
        body.actuator.close()
        hardware.lines.releaseAll()
    }

    deinit {
        stop()
        LogLevel.threshold = savedThreshold
        AgentTestSupport.removeTree(folder)
    }

    func round(maxWaitMillis: UInt64 = 20) throws {
        _ = try loop.round(nextTick: &nextTick, maxWaitMillis: maxWaitMillis)
    }

    /// Runs rounds until `condition` holds (bounded: fails the test after `limit` rounds).
    func pump(_ what: String, limit: Int = 2000, file: StaticString = #filePath, line: UInt = #line,
              until condition: () throws -> Bool) throws {
        for _ in 0..<limit {
            if try condition() { return }
            try round()
        }
        XCTFail("never happened: \(what)", file: file, line: line)
        throw PhoneError.notEstablished
    }

    func phone(_ key: P256PrivateKey) throws -> TestPhone {
        try TestPhone(path: socketPath, key: key, car: identity.publicKey, vehicle: vehicle)
    }

    /// The event log's access-decision rows of `key` (as written, in sequence order).
    func rows(of key: P256PrivateKey) throws -> [StoredEvent] {
        let actor = KeyID(publicKey: key.publicKey).bytes.hexString
        return try store.events(since: 0, limit: 100_000).filter { $0.event.actor == actor }
    }

    /// Non-initial level changes of an output role on the simulated chip.
    func moves(_ role: String) -> Int { chip.changes(role: role).filter { !$0.initial }.count }
}

/// A phone on its own socket: the real phone session, frames in and out, never blocking on
/// input (the car runs on the same thread).
final class TestPhone {
    private let socket: FileDescriptor
    private var session: PhoneProtocolSession
    private var assembler = LinkFrameAssembler()
    private var inbox: [Bytes] = []
    private(set) var closedByCar = false

    init(path: String, key: P256PrivateKey, car: P256PublicKey, vehicle: VehicleID) throws {
        socket = try UnixSocket.connect(path: path)
        session = PhoneProtocolSession(configuration: PhoneConfiguration(longTermKey: key, carIdentityKey: car, vehicleID: vehicle))
    }

    deinit { socket.close() }

    var isEstablished: Bool { session.isEstablished }

    func close() { socket.close() }

    func sendHello() throws { try send(try session.start()) }

    func sendCommand(_ command: CommandCode) throws { try send(try session.command(command, now: Self.now())) }

    /// True when a whole message from the car is waiting (reads what has arrived, no wait).
    func hasMessage() throws -> Bool {
        while inbox.isEmpty, !closedByCar, try !Poll.wait([(socket, .readable)], timeoutMillis: 0)[0].isEmpty {
            switch try socket.receive(upTo: 4096) {
            case .data(let bytes): inbox += try assembler.append(bytes)
            case .closed: closedByCar = true
            case .wouldBlock: return false
            }
        }
        return !inbox.isEmpty
    }

    /// The phone's reading of the next message (call after `hasMessage()` said true). A
    /// Challenge is answered at once (the AuthResponse goes out).
    func take() throws -> PhoneEvent {
        let event = try session.receive(inbox.removeFirst(), now: Self.now())
        if case .send(let bytes) = event { try send(bytes) }
        return event
    }

    private func send(_ message: Bytes) throws {
        let frame = try LinkFraming.frame(message)
        var offset = 0
        while offset < frame.count { offset += try socket.sendSome(frame[offset...]) }
    }

    private static func now() -> ProtocolTime {
        ProtocolTime(monotonicMillis: SystemClock().nowMillis(), wallSeconds: Int64(time(nil)), wallClockTrusted: true)
    }
}

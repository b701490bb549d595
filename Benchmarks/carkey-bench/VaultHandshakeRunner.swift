// One car engine whose identity is a given signer (a software key or a key held in a device),
// driven through whole visits by an in-process phone: Hello -> Challenge, AuthResponse ->
// SessionAccepted, one unlock Command -> Response, link closed. The same CarProtocolEngine path
// as HandshakeBench, but the car's calls are timed with the wall clock (a device signs outside
// this process, so its time never shows on this thread's CPU clock) and with the thread CPU
// clock (what the car process itself spends). The phone's work is not timed.
import Protocol

struct VaultHandshakeRunner {
    /// Car-side nanoseconds of one visit.
    struct Visit {
        let wallNanos: UInt64
        let cpuNanos: UInt64
    }

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    private var engine: CarProtocolEngine
    private let phoneConfiguration: PhoneConfiguration
    private var millis: UInt64 = 1_000_000
    private var link: UInt64 = 0

    init(identity: any ProtocolSigner) throws {
        let phoneKey = try P256PrivateKey.generate()
        // 17 characters like a VIN, as in HandshakeBench: the signed Challenge input is 208 bytes.
        let vehicleID = try VehicleID("OCK-BENCH-VIN-001")
        let directory = Keychain(records: [KeyRecord(publicKey: phoneKey.publicKey, role: .owner, permissions: .all)])
        engine = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: vehicleID),
                                   identity: identity, keys: directory)
        // The phone checks the Challenge signature against the device's public key, so every
        // completed visit proves the device signed correctly.
        phoneConfiguration = PhoneConfiguration(longTermKey: phoneKey, carIdentityKey: identity.publicKey, vehicleID: vehicleID)
    }

    /// One visit; throws unless the phone got an ok Response to its unlock.
    mutating func visit() throws -> Visit {
        link += 1
        // 10 ms of virtual protocol time per visit: the car-wide handshake budget (200/s, rule
        // H1a) then refills faster than the benchmark spends it, so no visit is refused busy.
        millis += 10
        let link = LinkID(link)
        let now = ProtocolTime(monotonicMillis: millis, wallSeconds: 1_767_225_600, wallClockTrusted: true)
        var phone = PhoneProtocolSession(configuration: phoneConfiguration)
        var wall: UInt64 = 0, cpu: UInt64 = 0

        let hello = try phone.start()
        let challenge = Self.timed(&wall, &cpu) { engine.receive(hello, from: link, now: now) }
        let answer = try phone.receive(Self.sent(challenge), now: now)
        guard case .send(let auth) = answer else {
            throw Failed(description: "no AuthResponse: the phone got \(challenge), answered \(answer)")
        }
        let accepted = Self.timed(&wall, &cpu) { engine.receive(auth, from: link, now: now) }
        guard case .established = try phone.receive(Self.sent(accepted), now: now) else {
            throw Failed(description: "session not established")
        }
        let command = try phone.command(.unlock, now: now)
        let actions = Self.timed(&wall, &cpu) { () -> [CarAction] in
            let actions = engine.receive(command, from: link, now: now)
            // An unlock's perform follows its commandAccepted audit record.
            if let request = actions.lazy.compactMap({ if case .perform(let request) = $0 { request } else { nil } }).first {
                return engine.complete(request.token, result: nil, vehicleState: [.trunkLocked], now: now)
            }
            return actions
        }
        guard case .response(let body) = try phone.receive(Self.sent(actions), now: now), body.isOK else {
            throw Failed(description: "unlock not answered ok")
        }
        _ = Self.timed(&wall, &cpu) { engine.linkClosed(link, now: now) }
        return Visit(wallNanos: wall, cpuNanos: cpu)
    }

    /// Runs `body`, adding its wall and thread-CPU nanoseconds.
    private static func timed<T>(_ wall: inout UInt64, _ cpu: inout UInt64, _ body: () -> T) -> T {
        let startWall = Bench.now(), startCPU = Bench.threadCPUNow()
        let result = body()
        cpu += Bench.threadCPUNow() - startCPU
        wall += Bench.now() - startWall
        return result
    }

    private static func sent(_ actions: [CarAction]) -> Bytes {
        for action in actions { if case .send(_, let bytes) = action { return bytes } }
        return []
    }
}

// Deterministic keys, randomness, clocks and a car+phone rig shared by the protocol tests.
import XCTest
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
@testable import Protocol

/// A file of this repository as text (the doc checks), or nil when it cannot be read.
func readRepositoryFile(_ relativePath: String) -> String? {
    // #filePath is <root>/Tests/ProtocolTests/ProtocolTestSupport.swift.
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    guard let file = fopen(parts.joined(separator: "/") + "/" + relativePath, "rb") else { return nil }
    defer { fclose(file) }
    var bytes = Bytes()
    var chunk = Bytes(repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

enum Fixtures {
    /// A private key whose scalar is SHA-256 of `label` (valid for every label used here).
    static func key(_ label: String) -> P256PrivateKey {
        // swiftlint:disable:next force_try
        try! P256PrivateKey(rawScalar: SHA256.hash(Array(label.utf8)))
    }

    static let vehicleID = try! VehicleID("OCK-TEST-VIN-00001")
    static let carIdentity = key("OCK1 test car identity")
    static let phoneKey = key("OCK1 test phone long-term")
    static let otherPhoneKey = key("OCK1 test other phone long-term")
    /// 2026-01-01T00:00:00Z, a plausible trusted wall time.
    static let wallStart: Int64 = 1_767_225_600

    static func time(trusted: Bool = true) -> ProtocolTime {
        ProtocolTime(monotonicMillis: 5_000_000, wallSeconds: wallStart, wallClockTrusted: trusted)
    }
}

/// Deterministic randomness: SHA-256(seed || counter) blocks, never repeating within a test.
final class SeededRandom: RandomSource {
    private let state: Mutex<UInt64>
    private let seed: Bytes

    init(_ seed: String) {
        self.seed = Array(seed.utf8)
        self.state = Mutex(0)
    }

    func randomBytes(_ count: Int) throws -> Bytes {
        var out = Bytes()
        while out.count < count {
            let counter = state.withLock { value -> UInt64 in value += 1; return value }
            var block = seed
            block.appendBE(counter)
            out += SHA256.hash(block)
        }
        return Array(out.prefix(count))
    }
}

/// Returns the given byte strings in order (known-answer challenges).
final class ScriptedRandom: RandomSource {
    private let queue: Mutex<[Bytes]>
    init(_ values: [Bytes]) { queue = Mutex(values) }
    struct Exhausted: Error {}
    func randomBytes(_ count: Int) throws -> Bytes {
        let next: Bytes? = queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next, next.count == count else { throw Exhausted() }
        return next
    }
}

/// A random source that always fails (the car must answer internalError, not crash).
struct FailingRandom: RandomSource {
    struct Failure: Error {}
    func randomBytes(_ count: Int) throws -> Bytes { throw Failure() }
}

/// Ephemeral keys derived from a label and a counter: deterministic and never repeated.
final class DerivedEphemeralKeys: EphemeralKeySource {
    private let counter = Mutex<Int>(0)
    private let label: String
    init(_ label: String) { self.label = label }
    func makeEphemeralKey() throws -> P256PrivateKey {
        let n = counter.withLock { value -> Int in value += 1; return value }
        return try P256PrivateKey(rawScalar: SHA256.hash(Array("\(label) #\(n)".utf8)))
    }
}

/// Signs with `key`, except that for `message` it returns `fixed` (which must verify): lets
/// the known-answer test pin the randomized signatures to the documented values.
struct PinnedSigner: ProtocolSigner {
    let key: P256PrivateKey
    let message: Bytes
    let fixed: ECDSASignature
    var publicKey: P256PublicKey { key.publicKey }
    func signature(for message: Bytes) throws -> ECDSASignature {
        message == self.message ? fixed : try key.signature(for: message)
    }
}

/// The pinned car key does ECDH like the real one (the advertising-key grant).
extension PinnedSigner: ProtocolKeyAgreement {
    func sharedSecret(with peer: P256PublicKey) throws -> Bytes { try key.sharedSecret(with: peer) }
}

extension Array where Element == CarAction {
    var sent: [Bytes] { compactMap { if case .send(_, let bytes) = $0 { return bytes } else { return nil } } }
    var performs: [CommandRequest] { compactMap { if case .perform(let r) = $0 { return r } else { return nil } } }
    var audits: [AuditRecord] { compactMap { if case .audit(let a) = $0 { return a } else { return nil } } }
    var grants: [AccessGrant] { compactMap { if case .authenticated(let g) = $0 { return g } else { return nil } } }
    var closed: [LinkID] { compactMap { if case .closeLink(let l) = $0 { return l } else { return nil } } }

    /// The fault of the single cleartext Fault message sent, if any.
    var cleartextFault: FaultCode? {
        for bytes in sent { if let message = try? FaultMessage.decode(bytes) { return message.fault } }
        return nil
    }
}

/// One car engine and one phone session wired back to back on link 7, with a hand-driven clock.
struct Rig {
    let directory: InMemoryKeyDirectory
    var car: CarProtocolEngine
    var phone: PhoneProtocolSession
    var now: ProtocolTime
    let link = LinkID(7)

    init(record: KeyRecord? = nil,
         phoneKey: P256PrivateKey = Fixtures.phoneKey,
         trusted: Bool = true,
         encoding: SignatureEncoding = .der,
         configure: (inout CarProtocolConfiguration) -> Void = { _ in },
         configurePhone: (inout PhoneConfiguration) -> Void = { _ in },
         verifier: (any ShareCertificateVerifier)? = nil,
         random: any RandomSource = SeededRandom("rig")) {
        let enrolled = record ?? KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .owner, permissions: .all)
        directory = InMemoryKeyDirectory([enrolled])
        var config = CarProtocolConfiguration(vehicleID: Fixtures.vehicleID)
        configure(&config)
        car = CarProtocolEngine(configuration: config, identity: Fixtures.carIdentity, keys: directory,
                                certificateVerifier: verifier, random: random,
                                ephemeralKeys: DerivedEphemeralKeys("car eph"))
        var phoneConfig = PhoneConfiguration(longTermKey: phoneKey, carIdentityKey: Fixtures.carIdentity.publicKey,
                                             vehicleID: Fixtures.vehicleID)
        phoneConfig.signatureEncoding = encoding
        phoneConfig.ephemeralKeys = DerivedEphemeralKeys("phone eph")
        configurePhone(&phoneConfig)
        phone = PhoneProtocolSession(configuration: phoneConfig)
        now = Fixtures.time(trusted: trusted)
    }

    mutating func advance(seconds: Double) {
        now = now.advanced(byMillis: UInt64(seconds * 1000))
    }

    mutating func toCar(_ bytes: Bytes, link: LinkID? = nil) -> [CarAction] {
        car.receive(bytes, from: link ?? self.link, now: now)
    }

    /// Hello -> Challenge bytes (fails the test if the car answers otherwise).
    mutating func helloAndChallenge(file: StaticString = #filePath, line: UInt = #line) throws -> (hello: Bytes, challenge: Bytes) {
        let hello = try phone.start()
        let actions = toCar(hello)
        let challenge = try XCTUnwrap(actions.sent.first, "no Challenge", file: file, line: line)
        XCTAssertEqual(challenge.first, MessageType.challenge.rawValue, "car answered \(actions)", file: file, line: line)
        return (hello, challenge)
    }

    /// Runs the whole handshake; returns the car's actions for the AuthResponse.
    @discardableResult
    mutating func handshake(file: StaticString = #filePath, line: UInt = #line) throws -> [CarAction] {
        let (_, challenge) = try helloAndChallenge(file: file, line: line)
        guard case .send(let auth) = try phone.receive(challenge, now: now) else {
            XCTFail("phone did not answer", file: file, line: line)
            return []
        }
        let actions = toCar(auth)
        let accepted = try XCTUnwrap(actions.sent.first, "no SessionAccepted: \(actions)", file: file, line: line)
        guard case .established = try phone.receive(accepted, now: now) else {
            XCTFail("phone not established", file: file, line: line)
            return actions
        }
        return actions
    }

    /// Sends a command from the phone and returns the car's actions.
    mutating func send(_ command: CommandCode) throws -> [CarAction] {
        toCar(try phone.command(command, now: now))
    }

    /// The phone's view of the car's single encrypted Response in `actions`.
    mutating func phoneResponse(_ actions: [CarAction], file: StaticString = #filePath, line: UInt = #line) throws -> ResponseBody {
        let bytes = try XCTUnwrap(actions.sent.first, "no Response: \(actions)", file: file, line: line)
        guard case .response(let body) = try phone.receive(bytes, now: now) else {
            XCTFail("not a Response", file: file, line: line)
            throw PhoneError.notEstablished
        }
        return body
    }

    /// Command -> perform -> complete -> Response, as the agent would do it.
    mutating func run(_ command: CommandCode, state: VehicleState = [.locked]) throws -> ResponseBody {
        let actions = try send(command)
        if let request = actions.performs.first {
            return try phoneResponse(car.complete(request.token, result: nil, vehicleState: state, now: now))
        }
        return try phoneResponse(actions)
    }
}

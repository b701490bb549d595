// Fixtures for the keys tests: owner and guest keys, a car whose key directory and certificate
// verifier is a SharedKeychain, and a tiny "agent" that carries out the engine's key actions
// the way carkey-agent will (install shares, enroll owners, apply revocations).
import XCTest
@testable import Protocol

enum KeysFixtures {
    static let owner = Fixtures.key("OCK1 test owner")
    static let secondOwner = Fixtures.key("OCK1 test second owner")
    static let guest = Fixtures.key("OCK1 test guest")
    static let otherGuest = Fixtures.key("OCK1 test other guest")
    static let serial = try! ShareSerial(bytes: Bytes(testHex: "0102030405060708"))
    static let otherVehicle = try! VehicleID("OCK-OTHER-VIN-0002")
    /// One day either side of the fixtures' wall time.
    static let dayBefore = UInt32(Fixtures.wallStart - 86_400)
    static let dayAfter = UInt32(Fixtures.wallStart + 86_400)

    static func share(_ level: PermissionLevel = .unlockOnly, holder: P256PrivateKey = guest,
                      issuer: P256PrivateKey = owner, vehicleID: VehicleID = Fixtures.vehicleID,
                      permissions: Permissions? = nil, notBefore: UInt32 = dayBefore, notAfter: UInt32 = dayAfter,
                      serial: ShareSerial = serial) throws -> ShareCertificate {
        try ShareCertificate.issue(by: issuer, holder: holder.publicKey, vehicleID: vehicleID,
                                   permissions: permissions ?? level.permissions,
                                   notBefore: notBefore, notAfter: notAfter, serial: serial)
    }

    /// Signs any body (also ones `issue` refuses to make) the way an owner would.
    static func signedShare(holder: P256PrivateKey = guest, issuer: P256PrivateKey = owner,
                            permissions: Permissions, notBefore: UInt32 = dayBefore, notAfter: UInt32 = dayAfter,
                            serial: ShareSerial = serial) throws -> Bytes {
        let body = ShareCertificate.body(serial: serial, holder: holder.publicKey, issuerKeyID: KeyID(publicKey: issuer.publicKey),
                                         vehicleID: Fixtures.vehicleID, permissions: permissions,
                                         notBefore: notBefore, notAfter: notAfter)
        return body + (try issuer.signature(for: ShareCertificate.signatureLabel + body).rawRepresentation)
    }

    static func revocation(_ target: RevocationTarget, issuer: P256PrivateKey = owner,
                           vehicleID: VehicleID = Fixtures.vehicleID) throws -> Bytes {
        try Revocation.issue(by: issuer, vehicleID: vehicleID, target: target, issuedAt: UInt32(Fixtures.wallStart)).encoded()
    }

    static func enrollment(_ key: P256PrivateKey, token: UInt64 = 900) -> EnrollmentRequest {
        EnrollmentRequest(token: CommandToken(token), link: LinkID(0), publicKey: key.publicKey)
    }

    /// A keychain with these owners enrolled as the pairing window would have done it.
    static func keychain(owners: [P256PrivateKey] = [owner], capacity: Int = Keychain.defaultCapacity) -> Keychain {
        var keychain = Keychain(capacity: capacity)
        for (index, key) in owners.enumerated() {
            _ = try! keychain.enroll(enrollment(key, token: UInt64(900 + index)), now: Fixtures.time())
        }
        return keychain
    }
}

/// One phone on one link.
struct KeysPhone {
    var session: PhoneProtocolSession
    let link: LinkID
    var keyID: KeyID { session.keyID }
}

/// A car with a SharedKeychain and an agent loop that performs key actions at once.
struct KeysRig {
    let keychain: SharedKeychain
    var car: CarProtocolEngine
    var now: ProtocolTime
    var nextLink: UInt64 = 10
    /// Everything the agent persisted, in order.
    var persisted: [KeychainChange] = []
    /// Faults the agent hit while carrying out actions (install, enroll, revoke).
    var agentFaults: [FaultCode] = []

    init(owners: [P256PrivateKey] = [KeysFixtures.owner], capacity: Int = Keychain.defaultCapacity,
         trusted: Bool = true, policy: ShareCertificatePolicy = .init(),
         random: any RandomSource = SeededRandom("keys rig"),
         configure: (inout CarProtocolConfiguration) -> Void = { _ in }) {
        keychain = SharedKeychain(KeysFixtures.keychain(owners: owners, capacity: capacity), policy: policy)
        var config = CarProtocolConfiguration(vehicleID: Fixtures.vehicleID)
        configure(&config)
        car = CarProtocolEngine(configuration: config, identity: Fixtures.carIdentity, keys: keychain,
                                certificateVerifier: keychain, random: random,
                                ephemeralKeys: DerivedEphemeralKeys("keys car eph"))
        now = Fixtures.time(trusted: trusted)
    }

    mutating func advance(seconds: Double) { now = now.advanced(byMillis: UInt64(seconds * 1000)) }

    mutating func phone(_ key: P256PrivateKey, certificate: Bytes = []) -> KeysPhone {
        var config = PhoneConfiguration(longTermKey: key, carIdentityKey: Fixtures.carIdentity.publicKey,
                                        vehicleID: Fixtures.vehicleID)
        config.shareCertificate = certificate
        config.ephemeralKeys = DerivedEphemeralKeys("keys phone eph \(nextLink)")
        nextLink += 1
        return KeysPhone(session: PhoneProtocolSession(configuration: config), link: LinkID(nextLink))
    }

    /// Delivers bytes to the car and lets the agent carry out key actions.
    mutating func toCar(_ bytes: Bytes, link: LinkID) -> [CarAction] {
        agent(car.receive(bytes, from: link, now: now))
    }

    /// What carkey-agent does with the engine's actions.
    mutating func agent(_ actions: [CarAction]) -> [CarAction] {
        var out: [CarAction] = []
        for action in actions {
            out.append(action)
            switch action {
            case .authenticated(let grant):
                let now = self.now
                do throws(FaultCode) {
                    let changes = try keychain.update { (keychain: inout Keychain) throws(FaultCode) -> [KeychainChange] in
                        var changes: [KeychainChange] = []
                        if grant.presentedCertificate != nil { changes += try keychain.install(grant, now: now) }
                        return changes + keychain.recordUse(of: grant.keyID, now: now)
                    }
                    persisted += changes
                } catch {
                    agentFaults.append(error)
                }
            case .enroll(let request):
                let now = self.now
                var result: FaultCode?
                do throws(FaultCode) {
                    persisted += try keychain.update { (keychain: inout Keychain) throws(FaultCode) -> [KeychainChange] in
                        try keychain.enroll(request, now: now)
                    }
                } catch {
                    agentFaults.append(error)
                    result = error
                }
                out += agent(car.completeEnrollment(request.token, result: result, now: now))
            case .revoke(let request):
                let now = self.now
                var result: FaultCode?
                do throws(FaultCode) {
                    persisted += try keychain.update { (keychain: inout Keychain) throws(FaultCode) -> [KeychainChange] in
                        try keychain.apply(request.revocation, now: now).changes
                    }
                } catch {
                    agentFaults.append(error)
                    result = error
                }
                out += agent(car.complete(request.token, result: result, vehicleState: [.locked], now: now))
            default:
                break
            }
        }
        return out
    }

    /// Hello with the phone's certificate: the car's first answer (Challenge or Fault).
    mutating func hello(_ phone: inout KeysPhone) throws -> [CarAction] {
        toCar(try phone.session.start(), link: phone.link)
    }

    /// The whole handshake; the car's actions for the AuthResponse (or the Hello refusal).
    @discardableResult
    mutating func connect(_ phone: inout KeysPhone, file: StaticString = #filePath, line: UInt = #line) throws -> [CarAction] {
        let first = try hello(&phone)
        guard let challenge = first.sent.first, challenge.first == MessageType.challenge.rawValue else { return first }
        guard case .send(let auth) = try phone.session.receive(challenge, now: now) else {
            XCTFail("phone did not answer", file: file, line: line)
            return first
        }
        let actions = toCar(auth, link: phone.link)
        if let accepted = actions.sent.first, accepted.first == MessageType.sessionAccepted.rawValue {
            _ = try phone.session.receive(accepted, now: now)
        }
        return actions
    }

    /// A command through the session, completed by the agent: the phone's view of the Response.
    mutating func run(_ command: CommandCode, args: Bytes = [], on phone: inout KeysPhone,
                      file: StaticString = #filePath, line: UInt = #line) throws -> ResponseBody {
        var actions = toCar(try phone.session.command(command, args: args, now: now), link: phone.link)
        if let request = actions.performs.first {
            actions = agent(car.complete(request.token, result: nil, vehicleState: [.locked], now: now))
        }
        let responses = actions.compactMap { action -> Bytes? in
            if case .send(let link, let bytes) = action, link == phone.link { return bytes } else { return nil }
        }
        let bytes = try XCTUnwrap(responses.first, "no Response: \(actions)", file: file, line: line)
        guard case .response(let body) = try phone.session.receive(bytes, now: now) else {
            XCTFail("not a Response", file: file, line: line)
            throw PhoneError.notEstablished
        }
        return body
    }
}

extension Array where Element == CarAction {
    var enrollments: [EnrollmentRequest] { compactMap { if case .enroll(let r) = $0 { return r } else { return nil } } }
    var revocations: [RevocationRequest] { compactMap { if case .revoke(let r) = $0 { return r } else { return nil } } }
    /// Bytes sent to one link.
    func sent(to link: LinkID) -> [Bytes] {
        compactMap { if case .send(let l, let bytes) = $0, l == link { return bytes } else { return nil } }
    }
}

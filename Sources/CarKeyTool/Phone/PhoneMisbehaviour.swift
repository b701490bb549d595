// `carkey phone --misbehave MODE`: a phone that breaks one rule of docs/protocol.md on purpose,
// for testing a car's conformance report (`carkey-agent run --conformance`) and its refusals.
// Each mode is the reference phone (PhoneProtocolSession) with one step done wrong; what the
// car answered is printed as for a normal visit: the answer first, then what was done.
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers
import Protocol

enum Misbehaviour: String, CaseIterable {
    /// The AuthResponse later than the challenge lifetime (--misbehave-delay, rule A3), or
    /// later than the car's handshake deadline (section 16).
    case lateAuth = "late-auth"
    /// A Command, then the same record again (rule S4).
    case replayCounter = "replay-counter"
    /// The first Command with counter 3: counters 1 and 2 skipped (phone rule 12.4).
    case counterGap = "counter-gap"
    /// A frame or fragment that breaks the transport's framing (section 16).
    case badFragment = "bad-fragment"
    /// Eight Hellos back to back on one link (rules H6 and H1a).
    case helloStorm = "hello-storm"
    /// A Command record before any Hello (rule R2).
    case commandBeforeSession = "command-before-session"
    /// An AuthResponse before any Hello (rule A1).
    case authBeforeHello = "auth-before-hello"
    /// The AuthResponse timestamp an hour behind (rule A5, on a car with trusted time).
    case staleTimestamp = "stale-timestamp"
    /// A second Command before the first one's Response (rule S6).
    case doubleCommand = "double-command"
    /// A Command whose expiresAt has passed on the car's session clock (rule S9).
    case expiredCommand = "expired-command"

    static let names = allCases.map(\.rawValue).joined(separator: ", ")
    static let defaultDelayMillis: UInt64 = 10_500
    static let stormHellos = 8
    /// How far the stale timestamp is behind the phone's clock.
    static let staleSeconds: Int64 = 3600
}

struct PhoneMisbehaviour {
    let options: PhoneOptions
    let mode: Misbehaviour
    let delayMillis: UInt64
    let clock: any MonotonicClock = SystemClock()

    /// What the car answered, as the visit's first stdout line.
    enum Answer {
        case response(ResponseBody)
        case fault(FaultMessage)
        case closed(String)
        case other(String)
    }

    func run() throws -> Int32 {
        guard let car = options.cars.first, case .command(let command, let args) = options.action else {
            throw PhoneExchangeFailure(description: "--misbehave goes with a command, not enroll")
        }
        var configuration = PhoneConfiguration(longTermKey: options.key, carIdentityKey: car.identityKey, vehicleID: car.vehicleID)
        configuration.signatureEncoding = options.encoding
        configuration.shareCertificate = options.shareCertificate
        var phone = PhoneProtocolSession(configuration: configuration)
        let link = try attempt { try options.transport.connect(options: options) }
        var notes: [String] = []
        let answer: Answer

        switch mode {
        case .commandBeforeSession:
            // 10 01, counter 1, six bytes that are no Command's ciphertext, a zero tag.
            let record = try attempt { try EncryptedRecord(type: .command, counter: 1, ciphertext: Bytes(repeating: 0, count: 6),
                                                           tag: Bytes(repeating: 0, count: Wire.tagLength)) }
            try attempt { try link.send(record.encoded()) }
            notes.append("sent a Command record before any Hello")
            answer = next(link)
        case .authBeforeHello:
            let challenge = try attempt { try SystemRandom().randomBytes(Wire.challengeLength) }
            let timestamp = UInt32(clamping: time(nil))
            let signature = try attempt {
                try options.key.signature(for: AuthResponseMessage.signedData(challenge: challenge, timestamp: timestamp))
            }
            let response = try attempt { try AuthResponseMessage(challenge: challenge, timestamp: timestamp,
                                                                 signature: signature.rawRepresentation) }
            try attempt { try link.send(response.encoded()) }
            notes.append("sent an AuthResponse for a challenge of its own, before any Hello")
            answer = next(link)
        case .badFragment:
            // The simulated link: a length header of 0. Bluetooth LE: a continuation fragment
            // (sequence 5) with no message started.
            let bytes: Bytes = options.transport.isBLE ? [0x05, 0x01, 0x01] : [0x00, 0x00]
            try attempt { try link.sendUnframed(bytes) }
            notes.append("sent \(bytes.hexString) outside the framing")
            answer = next(link)
        case .helloStorm:
            for _ in 0..<Misbehaviour.stormHellos { try attempt { try link.send(try phone.start()) } }
            var challenges = 0, faults: [String] = []
            var last: Answer = .other("no answer")
            for _ in 0..<Misbehaviour.stormHellos {
                last = next(link)
                switch last {
                case .fault(let fault): faults.append(fault.fault?.name ?? "\(fault.code)")
                case .other(let what) where what == "Challenge": challenges += 1
                default: break
                }
                if case .closed = last { break }
            }
            notes.append("sent \(Misbehaviour.stormHellos) Hellos back to back: \(challenges) Challenge(s), "
                         + "faults: \(faults.isEmpty ? "none" : faults.joined(separator: " "))")
            answer = faults.isEmpty ? last : .fault(FaultMessage(FaultCode(name: faults.last!) ?? .busy))
        default:
            let late = mode == .lateAuth ? delayMillis : 0
            let skew: Int64 = mode == .staleTimestamp ? -Misbehaviour.staleSeconds : 0
            if let refused = try handshake(&phone, link: link, delayMillis: late, skewSeconds: skew) {
                answer = refused
                notes.append(mode == .lateAuth ? "answered the Challenge after \(late) ms" : "timestamp \(-skew) s behind")
                break
            }
            answer = try session(&phone, link: link, command: command, args: args, notes: &notes)
        }
        return report(answer, notes: notes)
    }

    /// Hello, Challenge, AuthResponse (late or with a skewed timestamp): nil once established,
    /// else what the car answered instead.
    private func handshake(_ phone: inout PhoneProtocolSession, link: any PhoneLink, delayMillis: UInt64,
                           skewSeconds: Int64) throws -> Answer? {
        try attempt { try link.send(try phone.start()) }
        while true {
            let bytes: Bytes
            do { bytes = try link.receive() } catch { return .closed("\(error)") }
            let event = try attempt { try phone.receive(bytes, now: now(skewSeconds: skewSeconds)) }
            switch event {
            case .send(let response):
                if delayMillis > 0 { clock.sleep(millis: delayMillis) }
                do { try link.send(response) } catch { return .closed("\(error)") }
            case .established: return nil
            case .fault(let fault): return .fault(fault)
            case .response(let body): return .response(body)
            }
        }
    }

    /// The session part of the modes that misbehave inside a session.
    private func session(_ phone: inout PhoneProtocolSession, link: any PhoneLink, command: CommandCode, args: Bytes,
                         notes: inout [String]) throws -> Answer {
        switch mode {
        case .replayCounter:
            let record = try attempt { try phone.command(command, args: args, now: now()) }
            try attempt { try link.send(record) }
            let first = try response(&phone, link: link)
            notes.append("first answer: \(Self.line(first)); sent the same record again")
            try attempt { try link.send(record) }
            return try response(&phone, link: link)
        case .counterGap:
            // Sealed and dropped: the car never sees counters 1 and 2.
            let body = try commandBody(phone, command: command, args: args, lifetime: 10)
            for _ in 0..<2 { _ = try attempt { try phone.sealAnyPlaintext(.command, body.encoded()) } }
            try attempt { try link.send(try phone.command(command, args: args, now: now())) }
            notes.append("sent the first Command with counter 3")
            return try response(&phone, link: link)
        case .doubleCommand:
            try attempt { try link.send(try phone.command(command, args: args, now: now())) }
            let body = try commandBody(phone, command: command, args: args, lifetime: 10)
            try attempt { try link.send(try phone.sealAnyPlaintext(.command, body.encoded())) }
            let first = try response(&phone, link: link)
            let second = try response(&phone, link: link)
            notes.append("sent two Commands without waiting: answers \(Self.line(first)), \(Self.line(second))")
            if case .response(let body) = first, !body.isOK { return first }
            return second
        case .expiredCommand:
            let body = try commandBody(phone, command: command, args: args, lifetime: -1)
            try attempt { try link.send(try phone.sealAnyPlaintext(.command, body.encoded())) }
            notes.append("sent a Command whose expiresAt is a second before the car's session time")
            return try response(&phone, link: link)
        default:
            try attempt { try link.send(try phone.command(command, args: args, now: now())) }
            return try response(&phone, link: link)
        }
    }

    /// A Command plaintext expiring `lifetime` seconds after the phone's estimate of the car's
    /// session clock (section 9), built outside the session's own encoder.
    private func commandBody(_ phone: PhoneProtocolSession, command: CommandCode, args: Bytes, lifetime: Int64) throws -> CommandBody {
        guard let accepted = phone.sessionInfo else { throw PhoneExchangeFailure(description: "no session") }
        let expiresAt = UInt32(clamping: Int64(accepted.carTime) + lifetime)
        return try attempt { try CommandBody(command: command, expiresAt: expiresAt, args: args) }
    }

    private func response(_ phone: inout PhoneProtocolSession, link: any PhoneLink) throws -> Answer {
        while true {
            let bytes: Bytes
            do { bytes = try link.receive() } catch { return .closed("\(error)") }
            let event = try attempt { try phone.receive(bytes, now: now()) }
            if case .response(let body) = event { return .response(body) }
        }
    }

    /// The next message from the car, named (whatever the phone's state).
    private func next(_ link: any PhoneLink) -> Answer {
        let bytes: Bytes
        do { bytes = try link.receive() } catch { return .closed("\(error)") }
        switch try? Message.decode(bytes) {
        case .fault(let fault)?: return .fault(fault)
        case .challenge?: return .other("Challenge")
        default: return .other("a message of type 0x\(Array(bytes.prefix(1)).hexString)")
        }
    }

    private func report(_ answer: Answer, notes: [String]) -> Int32 {
        print(Self.line(answer))
        print("misbehaviour: \(mode.rawValue)")
        notes.forEach { print($0) }
        if case .response(let body) = answer, body.isOK { return 0 }
        return 1
    }

    static func line(_ answer: Answer) -> String {
        switch answer {
        case .response(let body): return body.isOK ? "ok" : PhoneReport.faultLine(body.result)
        case .fault(let fault): return PhoneReport.faultLine(fault.code)
        case .closed(let why): return "closed: \(why)"
        case .other(let what): return "answer: \(what)"
        }
    }

    private func now(skewSeconds: Int64 = 0) -> ProtocolTime {
        ProtocolTime(monotonicMillis: clock.nowMillis(), wallSeconds: Int64(time(nil)) + skewSeconds, wallClockTrusted: true)
    }

    private func attempt<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw PhoneExchangeFailure(description: "\(error)") }
    }
}

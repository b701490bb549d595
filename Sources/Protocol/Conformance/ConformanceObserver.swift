// Conformance mode's core: watches what a phone sends and what the car engine answered, and
// turns every departure from docs/protocol.md into a finding with the rule it breaks, plus a
// per-link checklist. Sans-IO like the engine: bytes, actions and time in, findings out.
//
// It only ever reads. The engine decides exactly as it does without an observer; most findings
// are its refusals (the audit record's fault) put in the phone's terms. A few are the phone's
// own rules the car tolerates (section 12, the retry budget), which only an observer can see:
// a skipped counter, a Hello repeated while a Challenge is outstanding, Hellos of one key
// faster than the handshake budget refills.

public struct ConformanceObserver: Sendable {
    /// Findings kept per link; more are counted only, so a hostile phone cannot grow a report.
    public static let findingsPerLink = 32
    /// Links whose report is kept after they ended (newest first).
    public static let endedReportsKept = 8
    /// Open links tracked at once; a transport holds far fewer.
    static let openLinksTracked = 64
    /// Challenges remembered per link, to say which one an AuthResponse answered.
    static let challengesRemembered = 8

    enum Phase: Sendable, Equatable {
        case idle
        case challenged(issuedAtMillis: UInt64)
        case pairing(issuedAtMillis: UInt64)
        case enrolling
        case established(atMillis: UInt64)
    }

    struct LinkRecord: Sendable {
        var report: ConformanceLinkReport
        var phase: Phase = .idle
        /// The Challenges sent on this link, oldest first (bounded).
        var challenges: [Bytes] = []
        /// The last counter the car accepted (a session starts at 0, as if record 0 was accepted).
        var lastCounter: UInt64 = 0

        var opened: UInt64 { report.openedAtMillis }
    }

    /// What the phone sent, as far as the cleartext shows.
    enum Sent: Sendable {
        case undecodable(MessageFormatError)
        case hello(HelloMessage)
        case authResponse(AuthResponseMessage)
        case command(counter: UInt64)
        case pairingHello(PairingHelloMessage)
        case pairingProof
        /// A message only the car sends (or a record type the phone never sends).
        case carMessage(String)
    }

    public let configuration: CarProtocolConfiguration
    /// The transport's deadline for a session (section 16); nil when none applies.
    public let handshakeDeadlineMillis: UInt64?
    var open: [LinkID: LinkRecord] = [:]
    var ended: [ConformanceLinkReport] = []
    /// The retry budget per key ID, across links (the car's own budget is per radio address).
    var helloBudgets: [KeyID: TokenBucket] = [:]

    public init(configuration: CarProtocolConfiguration, handshakeDeadlineMillis: UInt64?) {
        self.configuration = configuration
        self.handshakeDeadlineMillis = handshakeDeadlineMillis
    }

    /// Open links by ID, then ended ones, newest first.
    public var reports: [ConformanceLinkReport] {
        open.values.map(\.report).sorted { $0.link.rawValue < $1.link.rawValue } + ended
    }

    public func report(of link: LinkID) -> ConformanceLinkReport? {
        open[link]?.report ?? ended.first { $0.link == link }
    }

    public mutating func linkOpened(_ link: LinkID, transport: String, now: ProtocolTime) {
        if open[link] == nil, open.count >= Self.openLinksTracked,
           let oldest = open.keys.min(by: { $0.rawValue < $1.rawValue }) {
            open.removeValue(forKey: oldest)
        }
        open[link] = LinkRecord(report: ConformanceLinkReport(link: link, transport: transport,
                                                              openedAtMillis: now.monotonicMillis))
    }

    /// One message from the phone and the engine's answer to it (the actions of `receive`).
    /// Returns the findings it made that the link's report kept (all are counted).
    public mutating func message(_ bytes: Bytes, on link: LinkID, now: ProtocolTime,
                                 answer: [CarAction]) -> [ConformanceFinding] {
        if open[link] == nil { linkOpened(link, transport: "unknown", now: now) }
        var record = open[link]!
        let at = now.monotonicMillis &- record.opened
        let sent = Self.classify(bytes)
        let before = record.phase
        let refusal = Self.refusal(of: link, in: answer)
        var findings: [ConformanceFinding] = []
        func note(_ rule: ConformanceRule, _ fault: FaultCode?, _ detail: String) {
            findings.append(ConformanceFinding(link: link, atMillis: at, rule: rule, fault: fault, detail: detail))
        }

        // The message came through the transport's framing whole.
        record.report.count(.framing, passed: true)
        var helloRateExceeded = false
        switch sent {
        case .hello(let hello):
            record.report.keyID = hello.keyID
            if record.report.timings.hello == nil { record.report.timings.hello = at }
            if case .challenged(let issued) = before, now.monotonicMillis <= issued + configuration.challengeLifetimeMillis {
                note(.oneHello, nil, "Hello while the Challenge sent \(now.monotonicMillis - issued) ms ago is outstanding: "
                     + "it replaces that handshake, and the car reclaims this link first when it runs out of slots")
            } else {
                record.report.count(.oneHello, passed: true)
            }
            helloRateExceeded = !takeHelloToken(hello.keyID, now: now.monotonicMillis)
            if helloRateExceeded && refusal?.fault != .busy {
                note(.helloRate, nil, helloRateDetail)
            } else if !helloRateExceeded {
                record.report.count(.helloRate, passed: true)
            }
        case .authResponse:
            if record.report.timings.authResponse == nil { record.report.timings.authResponse = at }
        case .command:
            record.report.timings.commands += 1
        case .pairingHello(let hello):
            if let key = try? P256PublicKey(sec1: hello.phonePublicKey) { record.report.keyID = KeyID(publicKey: key) }
            if record.report.timings.hello == nil { record.report.timings.hello = at }
        default:
            break
        }

        let steps = checkOrder(for: sent, phase: before)
        if let refusal {
            let rule = failingRule(refusal.fault, sent: sent, phase: before, helloRateExceeded: helloRateExceeded)
            for step in steps.prefix(while: { $0 != rule }) where countsAsPassed(step, now: now) {
                record.report.count(step, passed: true)
            }
            note(rule, refusal.fault, detail(rule, refusal.fault, sent: sent, record: record, now: now))
        } else {
            for step in steps where countsAsPassed(step, now: now) { record.report.count(step, passed: true) }
        }

        // What the message did to the link's state, as the engine sees it.
        switch sent {
        case .authResponse:
            if case .challenged = before, refusal.map({ failingRule($0.fault, sent: sent, phase: before) != .challenge }) ?? true {
                record.phase = .idle
            }
        case .pairingProof:
            if case .pairing = before, refusal.map({ $0.fault != .unexpectedMessage }) ?? true { record.phase = .idle }
        case .command(let counter):
            if case .established = before, Self.spendsCounter(refusal?.fault) {
                let next = record.lastCounter &+ 1
                if counter == next {
                    record.report.count(.counterSequence, passed: true)
                } else {
                    let skipped = counter > next ? ", counters \(next) to \(counter - 1) skipped" : ""
                    note(.counterSequence, nil, "Command counter \(counter) where \(next) was next\(skipped): "
                         + "the car allows gaps, the phone rules number Commands 1, 2, 3")
                }
                record.lastCounter = max(record.lastCounter, counter)
            }
        default:
            break
        }
        let kept = findings.filter { record.report.add($0, keep: Self.findingsPerLink) }
        open[link] = record
        return kept + apply(answer, now: now, answering: link)
    }

    /// Actions the engine emitted on its own: housekeeping (`tick`), completions, and what the
    /// car itself started (pairing window, a revocation from the cloud).
    public mutating func carActions(_ actions: [CarAction], now: ProtocolTime) -> [ConformanceFinding] {
        apply(actions, now: now, answering: nil)
    }

    /// The link is gone. Returns the findings its end adds and its final report, which stays
    /// among the recent ones.
    public mutating func linkEnded(_ link: LinkID, _ end: ConformanceLinkEnd,
                                   now: ProtocolTime) -> (findings: [ConformanceFinding], report: ConformanceLinkReport)? {
        guard var record = open.removeValue(forKey: link) else { return nil }
        let at = now.monotonicMillis &- record.opened
        var findings: [ConformanceFinding] = []
        switch end {
        case .framing(let why):
            let rule = record.report.transport == "ble"
                ? "a fragment that does not fit the sequence ends the link (Bluetooth LE transport)"
                : "a frame length of 0 or above \(Wire.maxMessageLength) ends the link (simulated link)"
            findings.append(ConformanceFinding(link: link, atMillis: at, rule: .framing, fault: nil, detail: "\(why): \(rule)"))
        case .stoppedReading:
            findings.append(ConformanceFinding(link: link, atMillis: at, rule: .backlog, fault: nil,
                                               detail: "the car's output for the phone backed up past the transport's bound"))
        case .handshakeDeadline(let millis):
            findings.append(ConformanceFinding(link: link, atMillis: at, rule: .handshakeDeadline, fault: nil,
                                               detail: "no session \(millis) ms after connecting; \(record.report.timings.line)"))
        default:
            break
        }
        findings = findings.filter { record.report.add($0, keep: Self.findingsPerLink) }
        record.report.end = end
        record.report.endedAtMillis = now.monotonicMillis
        ended.insert(record.report, at: 0)
        if ended.count > Self.endedReportsKept { ended.removeLast(ended.count - Self.endedReportsKept) }
        return (findings, record.report)
    }

    // MARK: Reading the engine's actions

    /// Follows the handshake as the car's messages and records show it. `answering`: the link
    /// whose message these actions answer (its refusal was already taken into account).
    private mutating func apply(_ actions: [CarAction], now: ProtocolTime, answering: LinkID?) -> [ConformanceFinding] {
        var findings: [ConformanceFinding] = []
        var answered = false
        for action in actions {
            switch action {
            case .send(let link, let bytes):
                guard var record = open[link], let type = bytes.first else { continue }
                let at = now.monotonicMillis &- record.opened
                switch MessageType(rawValue: type) {
                case .challenge?:
                    record.phase = .challenged(issuedAtMillis: now.monotonicMillis)
                    if let challenge = try? ChallengeMessage.decode(bytes) {
                        record.challenges.append(challenge.challenge)
                        if record.challenges.count > Self.challengesRemembered { record.challenges.removeFirst() }
                    }
                    if record.report.timings.challenge == nil { record.report.timings.challenge = at }
                case .sessionAccepted?:
                    record.phase = .established(atMillis: now.monotonicMillis)
                    record.lastCounter = 0
                    record.report.timings.session = at
                    passDeadline(&record, at: at)
                case .pairingChallenge?:
                    record.phase = .pairing(issuedAtMillis: now.monotonicMillis)
                    if record.report.timings.challenge == nil { record.report.timings.challenge = at }
                case .pairingResult?:
                    record.phase = .idle
                default:
                    break
                }
                open[link] = record
            case .enroll(let request):
                guard var record = open[request.link] else { continue }
                record.phase = .enrolling
                record.report.keyID = request.keyID
                passDeadline(&record, at: now.monotonicMillis &- record.opened)
                open[request.link] = record
            case .audit(let audit):
                guard var record = open[audit.link] else { continue }
                let at = now.monotonicMillis &- record.opened
                var finding: ConformanceFinding?
                switch audit.event {
                case .rejected where audit.link == answering && !answered:
                    // The refusal of the message itself: already a finding.
                    answered = true
                case .rejected:
                    if let fault = audit.fault {
                        finding = ConformanceFinding(link: audit.link, atMillis: at, rule: .carCondition, fault: fault,
                                                     detail: "the car refused what it was doing for this link")
                    }
                case .commandCompleted:
                    if let fault = audit.fault {
                        // Proximity, an actuator, the last owner key: the car's decision after
                        // every protocol check passed.
                        let command = audit.command?.name ?? "the command"
                        finding = ConformanceFinding(link: audit.link, atMillis: at, rule: .outcome, fault: fault,
                                                     detail: "\(command) passed every check but was not carried out")
                    }
                case .sessionClosed where audit.link != answering:
                    switch audit.fault {
                    case .busy?:
                        finding = ConformanceFinding(link: audit.link, atMillis: at, rule: .slot, fault: .busy,
                                                     detail: "the car ended this session: a newer session of the same key, "
                                                        + "or an owner key needed the slot")
                    case .revoked?, .expired?, .unknownKey?:
                        finding = ConformanceFinding(link: audit.link, atMillis: at, rule: .keyInSession, fault: audit.fault,
                                                     detail: "the car ended this session: the key is no longer usable")
                    default:
                        break
                    }
                    if audit.fault != nil { record.phase = .idle }
                default:
                    break
                }
                if let finding, record.report.add(finding, keep: Self.findingsPerLink) {
                    findings.append(finding)
                }
                open[audit.link] = record
            default:
                continue
            }
        }
        return findings
    }

    private func passDeadline(_ record: inout LinkRecord, at: UInt64) {
        guard let deadline = handshakeDeadlineMillis, record.report.checksByRule[.handshakeDeadline] == nil else { return }
        record.report.count(.handshakeDeadline, passed: at <= deadline)
    }

    /// The fault the car answered `link`'s message with: the first refusal record for it, or a
    /// session the message found expired (rule S0 closes it instead of refusing).
    static func refusal(of link: LinkID, in actions: [CarAction]) -> (fault: FaultCode, closed: Bool)? {
        for action in actions {
            guard case .audit(let audit) = action, audit.link == link, let fault = audit.fault else { continue }
            if audit.event == .rejected { return (fault, false) }
            if audit.event == .sessionClosed, fault == .sessionExpired { return (fault, true) }
        }
        return nil
    }

    /// Whether a Command refused with `fault` (nil: accepted) spent its counter (rule S4: every
    /// Command that decrypted with a fresh counter does).
    static func spendsCounter(_ fault: FaultCode?) -> Bool {
        guard let fault else { return true }
        return ![.sessionExpired, .rateLimited, .unexpectedMessage, .decryptionFailed, .replayedCounter,
                 .outOfOrderCounter].contains(fault)
    }

    static func classify(_ bytes: Bytes) -> Sent {
        let message: Message
        do throws(MessageFormatError) { message = try Message.decode(bytes) } catch { return .undecodable(error) }
        switch message {
        case .hello(let hello): return .hello(hello)
        case .authResponse(let response): return .authResponse(response)
        case .encrypted(let record) where record.type == .command: return .command(counter: record.counter)
        case .encrypted(let record): return .carMessage(record.type == .sessionAccepted ? "SessionAccepted" : "Response")
        case .pairingHello(let hello): return .pairingHello(hello)
        case .pairingProof: return .pairingProof
        case .challenge: return .carMessage("Challenge")
        case .fault: return .carMessage("Fault")
        case .pairingChallenge: return .carMessage("PairingChallenge")
        case .pairingResult: return .carMessage("PairingResult")
        case .advertisingKeyGrant: return .carMessage("AdvertisingKeyGrant")
        }
    }

    // MARK: The retry budget

    private var helloRateDetail: String {
        let budget = configuration.handshakeBudgetPerPeer
        return "Hellos of this key faster than the handshake budget: \(budget.perSecond) a second after a burst of "
            + "\(budget.burst); over one radio address the car answers busy"
    }

    /// One token from the key's retry budget; false when it is spent.
    private mutating func takeHelloToken(_ keyID: KeyID, now: UInt64) -> Bool {
        let budget = configuration.handshakeBudgetPerPeer
        var bucket = helloBudgets[keyID] ?? TokenBucket(budget, now: now)
        let admitted = bucket.available(budget, now: now) >= 1
        if admitted { bucket.take() }
        if helloBudgets[keyID] == nil, helloBudgets.count >= configuration.rateLimitedLinkMemory,
           let oldest = helloBudgets.min(by: { $0.value.lastRefillMillis < $1.value.lastRefillMillis })?.key {
            helloBudgets.removeValue(forKey: oldest)
        }
        helloBudgets[keyID] = bucket
        return admitted
    }
}

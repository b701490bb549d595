// Checks a stream of published events and checkpoints (docs/cloud.md, "Audit chain and
// checkpoints"). Arrival order is irrelevant (MQTT may redeliver and interleave): events are
// keyed by their sequence, and order is what the hash links say.
import Protocol

public struct AuditVerifier {
    /// How far apart two swapped events may be for the verifier to name the pair; a farther
    /// swap is still found, as two altered events.
    static let reorderWindow: Int64 = 64

    private let carKey: P256PublicKey
    private let vehicle: String?
    private var events: [Int64: AuditEventLine] = [:]
    private var checkpoints: [AuditCheckpoint] = []
    private var report = AuditReport()
    private var unreadable = 0

    /// `vehicle`: when given, checkpoints must name it.
    public init(carKey: P256PublicKey, vehicle: String? = nil) {
        self.carKey = carKey
        self.vehicle = vehicle
    }

    /// Takes one published message (an event or a checkpoint, JSON); anything else is counted
    /// as unreadable. Returns false for such a line.
    @discardableResult
    public mutating func add(_ payload: Bytes) -> Bool {
        if let checkpoint = AuditCheckpoint(json: payload) {
            report.checkpointsRead += 1
            checkpoints.append(checkpoint)
            return true
        }
        guard let event = AuditEventLine(json: payload) else {
            unreadable += 1
            return false
        }
        report.eventsRead += 1
        let seq = event.fields.seq
        if let earlier = events[seq] {
            // At-least-once delivery repeats events; the same seq with other content does not.
            if earlier.fields != event.fields || earlier.chain != event.chain {
                report.findings.append(AuditFinding(.altered, seq: seq, "two different events carry this sequence number"))
            }
            return true
        }
        events[seq] = event
        return true
    }

    public func verify() -> AuditReport {
        var run = Run(verifier: self)
        run.checkCheckpoints()
        run.checkEvents()
        run.checkCoverage()
        return run.report
    }

    /// One verification pass over the collected messages.
    private struct Run {
        let events: [Int64: AuditEventLine]
        let seqs: [Int64]
        let carKey: P256PublicKey
        let vehicle: String?
        var checkpoints: [AuditCheckpoint]
        var report: AuditReport
        /// Valid pruning records by their first sequence.
        var pruned: [Int64: PrunedRange] = [:]
        /// Sequences that already have a finding (links next to them are not reported again).
        var flagged: Set<Int64> = []

        init(verifier: AuditVerifier) {
            events = verifier.events
            seqs = verifier.events.keys.sorted()
            carKey = verifier.carKey
            vehicle = verifier.vehicle
            checkpoints = verifier.checkpoints
            report = verifier.report
            report.firstSeq = seqs.first
            report.lastSeq = seqs.last
            for finding in report.findings { flagged.insert(finding.seq) }
            if verifier.unreadable > 0 { report.notes.append("\(verifier.unreadable) line(s) were neither an event nor a checkpoint") }
        }

        mutating func checkCheckpoints() {
            var valid = [AuditCheckpoint]()
            for checkpoint in checkpoints {
                if !checkpoint.isValid(carKey: carKey) {
                    report.findings.append(AuditFinding(.forgedCheckpoint, seq: checkpoint.seq,
                                                        "checkpoint signature does not verify under the car's key"))
                } else if let vehicle, checkpoint.vehicle != vehicle {
                    report.findings.append(AuditFinding(.forgedCheckpoint, seq: checkpoint.seq,
                                                        "checkpoint names vehicle \(checkpoint.vehicle), expected \(vehicle)"))
                } else {
                    valid.append(checkpoint)
                    for range in checkpoint.pruned where range.from <= range.to { pruned[range.from] = range }
                }
            }
            checkpoints = valid.sorted { $0.seq < $1.seq }
            report.validCheckpoints = valid.count
            report.coveredThrough = checkpoints.last?.seq
        }

        mutating func checkEvents() {
            // 1. Each event against its own hash.
            var reorderedPairs = Set<[Int64]>()
            for seq in seqs {
                guard let event = events[seq], let chain = event.chain, let recomputed = event.recomputedHash else { continue }
                guard recomputed != chain.hash else { continue }
                flagged.insert(seq)
                if let other = swappedPartner(of: event) {
                    let pair = [min(seq, other), max(seq, other)]
                    if reorderedPairs.insert(pair).inserted {
                        report.findings.append(AuditFinding(.reordered, seq: pair[0], otherSeq: pair[1],
                                                            "the two events' sequence numbers were swapped"))
                    }
                } else {
                    report.findings.append(AuditFinding(.altered, seq: seq, "content does not match its hash"))
                }
            }
            // 2. The links between neighbours, and the gaps between them.
            var previous: (seq: Int64, hash: Bytes)?
            var sawChained = false
            for seq in seqs {
                guard let event = events[seq] else { continue }
                guard let chain = event.chain else {
                    if sawChained {
                        flag(AuditFinding(.altered, seq: seq, "chain fields missing after the chain began"))
                    }
                    previous = nil
                    continue
                }
                defer { previous = (seq, chain.hash); sawChained = true }
                guard let before = previous else {
                    describeStart(seq: seq, prevHash: chain.prevHash)
                    continue
                }
                var expected = before.hash
                if seq > before.seq + 1 {
                    guard let bridged = bridge(after: before.seq, until: seq, from: before.hash) else { continue }
                    expected = bridged
                }
                if chain.prevHash != expected && !flagged.contains(seq) && !flagged.contains(before.seq) {
                    flag(AuditFinding(.altered, seq: seq, "does not link to seq \(before.seq) (an event was altered and re-hashed)"))
                }
            }
        }

        /// The hash the event after a gap must link to, when signed pruning records cover the
        /// whole gap; otherwise the uncovered parts are reported as deleted and nil is returned.
        mutating func bridge(after last: Int64, until next: Int64, from hash: Bytes) -> Bytes? {
            var cursor = last + 1
            var expected = hash
            var missingFrom: Int64?
            while cursor < next {
                if let range = pruned[cursor], range.to < next {
                    if let start = missingFrom {
                        flag(AuditFinding(.deleted, seq: start, otherSeq: cursor - 1 > start ? cursor - 1 : nil, "events missing from the stream"))
                        missingFrom = nil
                    }
                    report.notes.append("seq \(range.from)-\(range.to) pruned by the car before publishing (signed record)")
                    expected = range.lastHash
                    cursor = range.to + 1
                } else {
                    if missingFrom == nil { missingFrom = cursor }
                    cursor += 1
                }
            }
            if let start = missingFrom {
                flag(AuditFinding(.deleted, seq: start, otherSeq: next - 1 > start ? next - 1 : nil, "events missing from the stream"))
                return nil
            }
            return expected
        }

        mutating func describeStart(seq: Int64, prevHash: Bytes) {
            if prevHash == EventChainLink.genesis {
                report.notes.append("the chain starts at seq \(seq) (genesis)")
            } else if checkpoints.contains(where: { $0.seq == seq - 1 }) {
                report.notes.append("the stream starts at seq \(seq), anchored by the checkpoint at seq \(seq - 1)")
            } else {
                report.notes.append("the stream starts at seq \(seq); earlier events are not in it")
            }
        }

        /// The sequence this event really had, when recomputing with a nearby sequence matches.
        func swappedPartner(of event: AuditEventLine) -> Int64? {
            guard let chain = event.chain else { return nil }
            let seq = event.fields.seq
            for other in (seq - AuditVerifier.reorderWindow)...(seq + AuditVerifier.reorderWindow) where other != seq && events[other] != nil {
                var fields = event.fields
                fields.seq = other
                if EventCanonical.hash(fields, prevHash: chain.prevHash) == chain.hash { return other }
            }
            return nil
        }

        mutating func checkCoverage() {
            guard let first = seqs.first, let last = seqs.last else {
                if !checkpoints.isEmpty { report.notes.append("checkpoints but no events in the stream") }
                return
            }
            for checkpoint in checkpoints {
                let c = checkpoint.seq
                if let event = events[c], let chain = event.chain {
                    if chain.hash != checkpoint.headHash && !flagged.contains(c) {
                        flag(AuditFinding(.altered, seq: c, "the chain up to here does not match the signed checkpoint"))
                    }
                } else if let next = events[c + 1], let chain = next.chain, c >= first {
                    if chain.prevHash != checkpoint.headHash && !flagged.contains(c + 1) {
                        flag(AuditFinding(.altered, seq: c + 1, "does not link to the signed checkpoint at seq \(c)"))
                    }
                } else if c > last && c >= first {
                    // The car vouched for events the stream does not have: the tail was cut.
                    let missing = bridgeTail(after: last, through: c)
                    if missing { continue }
                }
            }
            if let covered = checkpoints.last?.seq, covered >= last {
                report.notYetCovered = nil
            } else {
                let from = max(first, (checkpoints.last?.seq ?? first - 1) + 1)
                report.notYetCovered = from...last
            }
        }

        /// Reports events after the stream's last one that a checkpoint vouches for, unless
        /// signed pruning records account for them. True when something was reported.
        mutating func bridgeTail(after last: Int64, through c: Int64) -> Bool {
            guard !flagged.contains(last + 1) else { return false }
            return bridge(after: last, until: c + 1, from: events[last]?.chain?.hash ?? []) == nil
        }

        mutating func flag(_ finding: AuditFinding) {
            report.findings.append(finding)
            flagged.insert(finding.seq)
        }
    }
}

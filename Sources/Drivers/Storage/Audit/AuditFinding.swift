// What `carkey audit verify` reports: findings (the stream was tampered with) by sequence
// number, and notes that describe the stream without accusing it.
import Protocol

public struct AuditFinding: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// Events missing from the stream and not covered by a signed pruning record.
        case deleted
        /// Two events whose sequence numbers were swapped.
        case reordered
        /// An event whose content no longer matches its hash, or whose link to its
        /// predecessor is broken, or that contradicts a signed checkpoint.
        case altered
        /// A checkpoint whose signature does not verify under the car's key.
        case forgedCheckpoint = "forged-checkpoint"
    }

    public let kind: Kind
    /// The sequence number the finding is about (the first of a range or pair).
    public let seq: Int64
    /// The last sequence of a deleted range, or the other event of a reordered pair.
    public let otherSeq: Int64?
    public let message: String

    public init(_ kind: Kind, seq: Int64, otherSeq: Int64? = nil, _ message: String) {
        self.kind = kind
        self.seq = seq
        self.otherSeq = otherSeq
        self.message = message
    }

    public var line: String {
        let where_ = otherSeq.map { kind == .reordered ? "seq \(seq) and \($0)" : "seq \(seq)-\($0)" } ?? "seq \(seq)"
        return "\(kind.rawValue) \(where_): \(message)"
    }
}

public struct AuditReport: Equatable, Sendable {
    public var findings: [AuditFinding] = []
    /// Neutral observations: where the stream starts, pruned ranges accepted, unreadable lines.
    public var notes: [String] = []
    public var eventsRead = 0
    public var checkpointsRead = 0
    public var validCheckpoints = 0
    public var firstSeq: Int64?
    public var lastSeq: Int64?
    /// The highest sequence a valid checkpoint vouches for (nil when none).
    public var coveredThrough: Int64?
    /// Events after the last valid checkpoint: not an error, only not yet vouched for.
    public var notYetCovered: ClosedRange<Int64>?

    public var intact: Bool { findings.isEmpty }
}

// Rebuilds protocol messages from fragments (MessageFragmenter's format). Strict: any fragment
// out of place is an error and the caller closes the link, because over ATT (reliable and
// ordered) a gap or a duplicate can only mean a broken or hostile peer.

public struct MessageReassembler: Sendable {
    private struct Partial: Sendable {
        var total: Int
        var nextSequence: UInt8
        var bytes: Bytes
    }

    /// The message being rebuilt; never more than `Wire.maxMessageLength` bytes.
    private var partial: Partial?

    public init() {}

    /// True between a START fragment and the fragment that completes its message.
    public var isInProgress: Bool { partial != nil }

    /// Message bytes held for the incomplete message.
    public var bufferedByteCount: Int { partial?.bytes.count ?? 0 }

    /// Forgets an incomplete message.
    public mutating func reset() { partial = nil }

    /// Adds one fragment; returns the message it completes, or nil if more are needed.
    /// A fragment that throws changes nothing.
    public mutating func append(_ fragment: Bytes) throws(FragmentError) -> Bytes? {
        guard let first = fragment.first else { throw .emptyFragment }
        let header = FragmentHeader(byte: first)

        var next: Partial
        let payload: ArraySlice<UInt8>
        if header.isStart {
            guard partial == nil else { throw .startWhileInProgress }
            guard header.sequence == 0 else { throw .sequenceGap(expected: 0, received: header.sequence) }
            guard fragment.count >= FragmentHeader.startOverhead else { throw .truncatedStart(length: fragment.count) }
            let total = Int(fragment[1]) << 8 | Int(fragment[2])
            guard total >= 1, total <= Wire.maxMessageLength else { throw .invalidTotalLength(total) }
            next = Partial(total: total, nextSequence: 0, bytes: [])
            payload = fragment[FragmentHeader.startOverhead...]
        } else {
            guard let current = partial else { throw .continuationWithoutStart(sequence: header.sequence) }
            guard header.sequence == current.nextSequence else {
                throw .sequenceGap(expected: current.nextSequence, received: header.sequence)
            }
            next = current
            payload = fragment[1...]
        }

        guard !payload.isEmpty else { throw .noPayload(sequence: header.sequence) }
        let received = next.bytes.count + payload.count
        guard received <= next.total else { throw .overrun(announced: next.total, received: received) }
        let complete = received == next.total
        if complete && !header.isEnd { throw .missingEnd }
        if !complete && header.isEnd { throw .endBeforeComplete(announced: next.total, received: received) }

        // Every check passed: only now does the state change.
        if complete {
            partial = nil
            return next.bytes + payload
        }
        next.bytes.reserveCapacity(next.total)
        next.bytes += payload
        next.nextSequence = FragmentHeader.next(after: header.sequence)
        partial = next
        return nil
    }
}

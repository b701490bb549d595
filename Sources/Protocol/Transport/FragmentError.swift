// Why a message cannot be cut into fragments, or why a received fragment breaks the sequence.
// Every reassembly error ends the link: a lost or forged fragment leaves nothing to resynchronise on.

public enum FragmentError: Error, Equatable, Sendable, CustomStringConvertible {
    // Sending side.
    /// Protocol messages are never empty.
    case emptyMessage
    /// A message above `Wire.maxMessageLength`.
    case oversizedMessage(length: Int, limit: Int)
    /// A fragment size below the 20 bytes of the minimum LE ATT MTU (23) minus the 3-byte header.
    case fragmentSizeTooSmall(Int)

    // Receiving side.
    /// A zero-length write or notification: there is not even a header byte.
    case emptyFragment
    /// A fragment that carries no message bytes (the sender never produces one; accepting them
    /// would let a peer keep a message open forever).
    case noPayload(sequence: UInt8)
    /// A START fragment too short for its 2-byte total length.
    case truncatedStart(length: Int)
    /// A START fragment announcing 0 or more than `Wire.maxMessageLength` bytes.
    case invalidTotalLength(Int)
    /// A continuation fragment with no message in progress.
    case continuationWithoutStart(sequence: UInt8)
    /// A START fragment while an earlier message is still incomplete.
    case startWhileInProgress
    /// A sequence number other than the next one expected (0 for START).
    case sequenceGap(expected: UInt8, received: UInt8)
    /// Fragments carrying more bytes than the START fragment announced.
    case overrun(announced: Int, received: Int)
    /// The END flag on a fragment that leaves the message incomplete.
    case endBeforeComplete(announced: Int, received: Int)
    /// The fragment that completes the message lacks the END flag.
    case missingEnd

    public var description: String {
        switch self {
        case .emptyMessage: return "empty message"
        case .oversizedMessage(let length, let limit): return "message of \(length) bytes exceeds \(limit)"
        case .fragmentSizeTooSmall(let size): return "fragment size \(size) is below 20"
        case .emptyFragment: return "empty fragment"
        case .noPayload(let sequence): return "fragment \(sequence) carries no message bytes"
        case .truncatedStart(let length): return "START fragment of \(length) bytes has no total length"
        case .invalidTotalLength(let total): return "total length \(total) is not 1...\(Wire.maxMessageLength)"
        case .continuationWithoutStart(let sequence): return "fragment \(sequence) continues no message"
        case .startWhileInProgress: return "START fragment while a message is incomplete"
        case .sequenceGap(let expected, let received): return "fragment \(received) where \(expected) was expected"
        case .overrun(let announced, let received): return "\(received) bytes for a message of \(announced)"
        case .endBeforeComplete(let announced, let received):
            return "END after \(received) of \(announced) bytes"
        case .missingEnd: return "the fragment completing the message lacks END"
        }
    }
}

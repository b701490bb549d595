// Cuts one protocol message into ATT-sized fragments. An ATT write or notification value holds
// at most MTU - 3 bytes, so a 1024-byte message needs several of them.

public enum MessageFragmenter {
    /// The smallest fragment: the minimum LE ATT MTU (23) less the 3-byte ATT header.
    public static let minimumFragmentSize = 20

    /// The fragments of `message`, each at most `maxFragment` bytes, in sending order.
    /// The first carries the total length, so the receiver knows when the message is complete
    /// without waiting for a timeout.
    public static func fragments(of message: Bytes, maxFragment: Int) throws(FragmentError) -> [Bytes] {
        guard !message.isEmpty else { throw .emptyMessage }
        guard message.count <= Wire.maxMessageLength else {
            throw .oversizedMessage(length: message.count, limit: Wire.maxMessageLength)
        }
        guard maxFragment >= minimumFragmentSize else { throw .fragmentSizeTooSmall(maxFragment) }

        var fragments: [Bytes] = []
        var offset = 0
        var sequence: UInt8 = 0
        while offset < message.count {
            let isStart = offset == 0
            let room = maxFragment - (isStart ? FragmentHeader.startOverhead : 1)
            let end = min(message.count, offset + room)
            let header = FragmentHeader(isStart: isStart, isEnd: end == message.count, sequence: sequence)
            var fragment: Bytes = [header.byte]
            fragment.reserveCapacity(maxFragment)
            if isStart {
                fragment += [UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
            }
            fragment += message[offset..<end]
            fragments.append(fragment)
            offset = end
            sequence = FragmentHeader.next(after: sequence)
        }
        return fragments
    }
}

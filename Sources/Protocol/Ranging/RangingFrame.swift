// The payloads of the three UWB frames of a DS-TWR round. The STS proves the timing; the tag
// proves who sent the payload (and so the Final's timestamps) and for which round.
//
//   0      frame type: 0x01 Poll (initiator), 0x02 Response (responder), 0x03 Final (initiator)
//   1..4   ranging session ID (UInt32 BE)
//   5..8   round (UInt32 BE)
//   Final only: 9..13 poll_tx, 14..18 resp_rx, 19..23 final_tx (40-bit, little-endian, DTU)
//   last 8 tag = HMAC-SHA256(frame key, every byte before it), first 8 bytes

public enum RangingFrameType: UInt8, Sendable, CaseIterable {
    case poll = 0x01
    case response = 0x02
    case final = 0x03

    /// The whole payload length for this type (tag included).
    public var length: Int { self == .final ? RangingFrame.headerLength + 15 + RangingFrame.tagLength : RangingFrame.headerLength + RangingFrame.tagLength }
}

/// The initiator's three timestamps, carried in the Final.
public struct InitiatorTimestamps: Sendable, Equatable {
    public let pollTx: UWBTimestamp
    public let responseRx: UWBTimestamp
    public let finalTx: UWBTimestamp

    public init(pollTx: UWBTimestamp, responseRx: UWBTimestamp, finalTx: UWBTimestamp) {
        self.pollTx = pollTx
        self.responseRx = responseRx
        self.finalTx = finalTx
    }
}

public struct RangingFrame: Sendable, Equatable {
    public static let headerLength = 9
    /// 64 bits: a forger gets one try per frame on the air, inside a receive window of a few
    /// milliseconds, and a wrong tag ends the round; 2^-64 per try cannot be ground down that
    /// way. Short frames also mean less air time per round.
    public static let tagLength = 8
    public static let maxLength = RangingFrameType.final.length

    public let type: RangingFrameType
    public let sessionID: UInt32
    public let round: UInt32
    /// Present exactly when `type` is `.final`.
    public let timestamps: InitiatorTimestamps?

    public static func poll(sessionID: UInt32, round: UInt32) -> RangingFrame {
        RangingFrame(type: .poll, sessionID: sessionID, round: round, timestamps: nil)
    }

    public static func response(sessionID: UInt32, round: UInt32) -> RangingFrame {
        RangingFrame(type: .response, sessionID: sessionID, round: round, timestamps: nil)
    }

    public static func final(sessionID: UInt32, round: UInt32, timestamps: InitiatorTimestamps) -> RangingFrame {
        RangingFrame(type: .final, sessionID: sessionID, round: round, timestamps: timestamps)
    }

    /// The payload bytes with their tag.
    public func sealed(frameKey: Bytes) -> Bytes {
        var body: Bytes = [type.rawValue]
        body.appendBE(sessionID)
        body.appendBE(round)
        if let timestamps {
            body += timestamps.pollTx.littleEndianBytes + timestamps.responseRx.littleEndianBytes
                + timestamps.finalTx.littleEndianBytes
        }
        return body + Self.tag(body, frameKey: frameKey)
    }

    /// Checks length, type and tag (in constant time), in that order, before reading any field
    /// as meaningful. The caller then checks session, round and type against what it expects.
    public static func open(_ bytes: Bytes, frameKey: Bytes) throws(RangingFrameError) -> RangingFrame {
        guard !bytes.isEmpty else { throw .truncated(length: 0) }
        guard bytes.count <= maxLength else { throw .oversized(length: bytes.count) }
        guard let type = RangingFrameType(rawValue: bytes[0]) else { throw .unknownType(bytes[0]) }
        guard bytes.count == type.length else {
            throw bytes.count < type.length ? .truncated(length: bytes.count) : .oversized(length: bytes.count)
        }
        let body = Array(bytes[0..<(bytes.count - tagLength)])
        guard ConstantTime.equals(tag(body, frameKey: frameKey), Array(bytes[(bytes.count - tagLength)...])) else {
            throw .badTag
        }
        func u32(_ at: Int) -> UInt32 { body[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        func stamp(_ at: Int) -> UWBTimestamp { UWBTimestamp(littleEndian: body[at..<(at + 5)])! }
        let timestamps = type == .final
            ? InitiatorTimestamps(pollTx: stamp(9), responseRx: stamp(14), finalTx: stamp(19)) : nil
        return RangingFrame(type: type, sessionID: u32(1), round: u32(5), timestamps: timestamps)
    }

    static func tag(_ body: Bytes, frameKey: Bytes) -> Bytes {
        Array(HMACSHA256.authenticationCode(key: frameKey, message: body).prefix(tagLength))
    }
}

/// Why a UWB payload is not a frame of this ranging session.
public enum RangingFrameError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(length: Int)
    case oversized(length: Int)
    case unknownType(UInt8)
    /// Not made with this session's frame key (forged, corrupted, or another session's).
    case badTag
    /// Authentic, but not the frame the role waits for (type, session or round).
    case unexpected(String)

    public var failure: RangingFailure {
        self == .badTag ? .badAuthenticator : .unexpectedFrame
    }

    public var description: String {
        switch self {
        case .truncated(let length): return "frame of \(length) bytes is too short"
        case .oversized(let length): return "frame of \(length) bytes is too long"
        case .unknownType(let type): return "unknown frame type 0x\([type].hexString)"
        case .badTag: return "frame tag does not verify"
        case .unexpected(let what): return "unexpected frame: \(what)"
        }
    }
}

// The one-byte header in front of every fragment (docs/protocol.md section 16, Bluetooth LE
// transport): bit 7 START, bit 6 END, bits 0-5 a sequence number that wraps at 64.

public struct FragmentHeader: Equatable, Sendable {
    public static let startFlag: UInt8 = 0x80
    public static let endFlag: UInt8 = 0x40
    public static let sequenceMask: UInt8 = 0x3F
    /// Header byte plus the START fragment's 2-byte total length.
    public static let startOverhead = 3

    public var isStart: Bool
    public var isEnd: Bool
    /// 0...63.
    public var sequence: UInt8

    public init(isStart: Bool, isEnd: Bool, sequence: UInt8) {
        self.isStart = isStart
        self.isEnd = isEnd
        self.sequence = sequence & Self.sequenceMask
    }

    public init(byte: UInt8) {
        self.init(isStart: byte & Self.startFlag != 0, isEnd: byte & Self.endFlag != 0,
                  sequence: byte & Self.sequenceMask)
    }

    public var byte: UInt8 {
        (isStart ? Self.startFlag : 0) | (isEnd ? Self.endFlag : 0) | sequence
    }

    /// The sequence number after `sequence`, modulo 64.
    static func next(after sequence: UInt8) -> UInt8 { (sequence &+ 1) & sequenceMask }
}

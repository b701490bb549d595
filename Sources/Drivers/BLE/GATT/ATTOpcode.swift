// ATT opcodes (Core spec Vol 3 Part F, 3.4.8) and the error codes this server sends (3.4.1.1).

/// The opcodes the car's server and the phone's client understand. Others are answered by
/// opcode number alone (Request Not Supported) without a case here.
public enum ATTOpcode: UInt8, Sendable, CaseIterable {
    case errorResponse = 0x01
    case exchangeMTURequest = 0x02
    case exchangeMTUResponse = 0x03
    case findInformationRequest = 0x04
    case findInformationResponse = 0x05
    case findByTypeValueRequest = 0x06
    case findByTypeValueResponse = 0x07
    case readByTypeRequest = 0x08
    case readByTypeResponse = 0x09
    case readRequest = 0x0A
    case readResponse = 0x0B
    case readBlobRequest = 0x0C
    case readBlobResponse = 0x0D
    case readByGroupTypeRequest = 0x10
    case readByGroupTypeResponse = 0x11
    case writeRequest = 0x12
    case writeResponse = 0x13
    case handleValueNotification = 0x1B
    case handleValueIndication = 0x1D
    case handleValueConfirmation = 0x1E
    case writeCommand = 0x52

    /// Bit 6: a command, which never gets a response, not even an error.
    public static let commandFlag: UInt8 = 0x40

    /// Client-to-server opcodes that expect a response. Unknown ones are counted as requests
    /// unless the command flag is set, so they get Request Not Supported instead of silence
    /// (silence would stall the client until its 30 s transaction timeout).
    public static func isRequest(_ opcode: UInt8) -> Bool {
        guard opcode & commandFlag == 0 else { return false }
        switch opcode {
        case 0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x1B, 0x1D, 0x1E, 0x21, 0x23:
            return false // responses, notifications (0x23: multiple), indications, confirmation
        default:
            return true
        }
    }
}

/// An ATT error code. A struct so that a client can carry codes it does not know.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    /// Application error (0x80...0x9F are the application's): the key service rejected a
    /// fragment, and the link is about to be closed.
    public static let messageRejected = ATTErrorCode(rawValue: 0x80)
    /// Common profile error code (Core Specification Supplement): a CCCD value the
    /// characteristic's properties do not allow.
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)

    public var description: String {
        let names: [UInt8: String] = [
            0x01: "invalid handle", 0x02: "read not permitted", 0x03: "write not permitted",
            0x04: "invalid PDU", 0x06: "request not supported", 0x07: "invalid offset",
            0x0A: "attribute not found", 0x0B: "attribute not long",
            0x0D: "invalid attribute value length", 0x10: "unsupported group type",
            0x80: "message rejected", 0xFD: "CCCD improperly configured",
        ]
        let hex = "0x" + [rawValue].hexString
        return names[rawValue].map { "\($0) (\(hex))" } ?? "error \(hex)"
    }
}

// Parsing of the client-to-server PDUs the car's server handles. Each has a fixed layout, so
// a PDU of any other length is Invalid PDU (Core spec Vol 3 Part F, 3.4).
import Protocol

/// A parsed client-to-server PDU.
public enum ATTRequest: Equatable, Sendable {
    case exchangeMTU(clientMTU: UInt16)
    case findInformation(start: UInt16, end: UInt16)
    case findByTypeValue(start: UInt16, end: UInt16, type: ATTUUID, value: Bytes)
    case readByType(start: UInt16, end: UInt16, type: ATTUUID)
    case read(handle: UInt16)
    case readBlob(handle: UInt16, offset: UInt16)
    case readByGroupType(start: UInt16, end: UInt16, type: ATTUUID)
    case write(handle: UInt16, value: Bytes)
    case writeCommand(handle: UInt16, value: Bytes)
    case handleValueConfirmation
}

/// Why a PDU is not a request the server handles; the server turns each into its response.
public enum ATTRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Zero bytes: no opcode to answer.
    case empty
    /// A known opcode with the wrong length or a malformed UUID.
    case invalidPDU(opcode: UInt8)
    /// A request the server does not implement (Read Multiple, Prepare Write, unknown ...).
    case notSupported(opcode: UInt8)
    /// A command, response, notification or indication the server ignores.
    case ignored(opcode: UInt8)

    public var description: String {
        switch self {
        case .empty: return "empty PDU"
        case .invalidPDU(let opcode): return "invalid PDU for opcode 0x\([opcode].hexString)"
        case .notSupported(let opcode): return "opcode 0x\([opcode].hexString) not supported"
        case .ignored(let opcode): return "opcode 0x\([opcode].hexString) ignored"
        }
    }
}

extension ATTRequest {
    public static func parse(_ pdu: Bytes) throws(ATTRequestError) -> ATTRequest {
        guard let opcodeByte = pdu.first else { throw .empty }
        guard let opcode = ATTOpcode(rawValue: opcodeByte) else {
            throw ATTOpcode.isRequest(opcodeByte) ? .notSupported(opcode: opcodeByte) : .ignored(opcode: opcodeByte)
        }
        let body = pdu.dropFirst()
        func u16(_ at: Int) -> UInt16 {
            UInt16(body[body.startIndex + at]) | UInt16(body[body.startIndex + at + 1]) << 8
        }
        func need(_ valid: Bool) throws(ATTRequestError) {
            if !valid { throw .invalidPDU(opcode: opcodeByte) }
        }
        switch opcode {
        case .exchangeMTURequest:
            try need(body.count == 2)
            return .exchangeMTU(clientMTU: u16(0))
        case .findInformationRequest:
            try need(body.count == 4)
            return .findInformation(start: u16(0), end: u16(2))
        case .findByTypeValueRequest:
            try need(body.count >= 6)
            return .findByTypeValue(start: u16(0), end: u16(2), type: ATTUUID(u16(4)), value: Bytes(body.dropFirst(6)))
        case .readByTypeRequest, .readByGroupTypeRequest:
            try need(body.count == 6 || body.count == 20)
            guard let type = ATTUUID(wire: body.dropFirst(4)) else { throw .invalidPDU(opcode: opcodeByte) }
            return opcode == .readByTypeRequest
                ? .readByType(start: u16(0), end: u16(2), type: type)
                : .readByGroupType(start: u16(0), end: u16(2), type: type)
        case .readRequest:
            try need(body.count == 2)
            return .read(handle: u16(0))
        case .readBlobRequest:
            try need(body.count == 4)
            return .readBlob(handle: u16(0), offset: u16(2))
        case .writeRequest:
            try need(body.count >= 2)
            return .write(handle: u16(0), value: Bytes(body.dropFirst(2)))
        case .writeCommand:
            // A malformed command is dropped, like any command the server cannot act on.
            guard body.count >= 2 else { throw .ignored(opcode: opcodeByte) }
            return .writeCommand(handle: u16(0), value: Bytes(body.dropFirst(2)))
        case .handleValueConfirmation:
            try need(body.isEmpty)
            return .handleValueConfirmation
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
             .readByTypeResponse, .readResponse, .readBlobResponse, .readByGroupTypeResponse,
             .writeResponse, .handleValueNotification, .handleValueIndication:
            throw .ignored(opcode: opcodeByte)
        }
    }
}

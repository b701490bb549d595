// Building ATT PDUs: little-endian fields behind an opcode. Shared by server and client.
import Protocol

public enum ATTPDU {
    static func le16(_ value: UInt16) -> Bytes { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    /// Reads a little-endian UInt16 at `offset` of a PDU the caller has length-checked.
    static func u16(_ pdu: Bytes, _ offset: Int) -> UInt16 {
        UInt16(pdu[offset]) | UInt16(pdu[offset + 1]) << 8
    }

    public static func errorResponse(request: UInt8, handle: UInt16, code: ATTErrorCode) -> Bytes {
        [ATTOpcode.errorResponse.rawValue, request] + le16(handle) + [code.rawValue]
    }

    public static func exchangeMTURequest(clientMTU: UInt16) -> Bytes {
        [ATTOpcode.exchangeMTURequest.rawValue] + le16(clientMTU)
    }

    public static func exchangeMTUResponse(serverMTU: UInt16) -> Bytes {
        [ATTOpcode.exchangeMTUResponse.rawValue] + le16(serverMTU)
    }

    public static func findInformationRequest(start: UInt16, end: UInt16) -> Bytes {
        [ATTOpcode.findInformationRequest.rawValue] + le16(start) + le16(end)
    }

    public static func findByTypeValueRequest(start: UInt16, end: UInt16, type: UInt16, value: Bytes) -> Bytes {
        [ATTOpcode.findByTypeValueRequest.rawValue] + le16(start) + le16(end) + le16(type) + value
    }

    public static func readByTypeRequest(start: UInt16, end: UInt16, type: ATTUUID) -> Bytes {
        [ATTOpcode.readByTypeRequest.rawValue] + le16(start) + le16(end) + type.wireBytes
    }

    public static func readByGroupTypeRequest(start: UInt16, end: UInt16, type: ATTUUID) -> Bytes {
        [ATTOpcode.readByGroupTypeRequest.rawValue] + le16(start) + le16(end) + type.wireBytes
    }

    public static func readRequest(handle: UInt16) -> Bytes {
        [ATTOpcode.readRequest.rawValue] + le16(handle)
    }

    public static func readBlobRequest(handle: UInt16, offset: UInt16) -> Bytes {
        [ATTOpcode.readBlobRequest.rawValue] + le16(handle) + le16(offset)
    }

    public static func writeRequest(handle: UInt16, value: Bytes) -> Bytes {
        [ATTOpcode.writeRequest.rawValue] + le16(handle) + value
    }

    public static func writeCommand(handle: UInt16, value: Bytes) -> Bytes {
        [ATTOpcode.writeCommand.rawValue] + le16(handle) + value
    }

    public static let writeResponse: Bytes = [ATTOpcode.writeResponse.rawValue]

    public static func notification(handle: UInt16, value: Bytes) -> Bytes {
        [ATTOpcode.handleValueNotification.rawValue] + le16(handle) + value
    }

    public static func indication(handle: UInt16, value: Bytes) -> Bytes {
        [ATTOpcode.handleValueIndication.rawValue] + le16(handle) + value
    }

    public static let confirmation: Bytes = [ATTOpcode.handleValueConfirmation.rawValue]
}

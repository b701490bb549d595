// Why the phone's ATT client gave up on a car. Every case ends the link.
import Protocol

public enum ATTClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The car has no key service (Find By Type Value found nothing).
    case serviceNotFound
    /// The key service lacks a characteristic, or it lacks the needed properties.
    case characteristicMissing(ATTUUID)
    /// The car-to-phone characteristic has no CCCD.
    case descriptorMissing
    /// A PDU that makes no sense now (e.g. a Read Response during discovery).
    case unexpectedPDU(opcode: UInt8)
    /// A response too short or inconsistent to parse.
    case malformedPDU(opcode: UInt8)
    /// The car answered a request with an error the client cannot work around.
    case errorResponse(request: UInt8, handle: UInt16, code: ATTErrorCode)
    /// The car broke the fragment format.
    case fragment(FragmentError)
    /// `send(message:)` before discovery and subscription finished.
    case notReady
    /// `send(message:)` with an empty or oversized message.
    case invalidMessage(FragmentError)

    public var description: String {
        switch self {
        case .serviceNotFound: return "the car has no key service"
        case .characteristicMissing(let uuid): return "key service characteristic \(uuid) missing or unusable"
        case .descriptorMissing: return "car-to-phone characteristic has no CCCD"
        case .unexpectedPDU(let opcode): return "unexpected ATT opcode 0x\([opcode].hexString)"
        case .malformedPDU(let opcode): return "malformed ATT PDU, opcode 0x\([opcode].hexString)"
        case .errorResponse(let request, let handle, let code):
            return "ATT error \(code) for opcode 0x\([request].hexString) at handle 0x\(Bytes(ATTPDU.le16(handle).reversed()).hexString)"
        case .fragment(let error): return "bad fragment from the car: \(error)"
        case .notReady: return "not connected to the key service yet"
        case .invalidMessage(let error): return "cannot send: \(error)"
        }
    }
}

// The car's ATT server for one LE link (L2CAP CID 4), sans-IO: each call takes one received
// PDU (one SOCK_SEQPACKET read) and returns the PDUs to write back, one write each. A value
// per link; links share nothing but the immutable database.
import Protocol

/// What one received PDU produced.
public struct ATTServerOutput: Equatable, Sendable {
    /// PDUs to write to the link, in order.
    public var pdus: [Bytes] = []
    /// Protocol messages the phone completed (writes to the phone-to-car value).
    public var messages: [Bytes] = []
    /// Set when the phone broke the fragment format: close the link. Later input is ignored.
    public var fatalError: FragmentError?

    public init(pdus: [Bytes] = [], messages: [Bytes] = [], fatalError: FragmentError? = nil) {
        self.pdus = pdus
        self.messages = messages
        self.fatalError = fatalError
    }
}

/// Why `send(message:)` refused a message.
public enum ATTSendError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Empty or above 1024 bytes.
    case invalidMessage(FragmentError)
    /// `ATTServerConnection.maxQueuedMessages` already wait for a subscription or for
    /// indication confirmations: the phone is not keeping up, close the link.
    case backlogFull(limit: Int)
    /// The link had a fatal error.
    case closed

    public var description: String {
        switch self {
        case .invalidMessage(let error): return "cannot send: \(error)"
        case .backlogFull(let limit): return "\(limit) messages already wait for the phone"
        case .closed: return "link closed after a fatal error"
        }
    }
}

public struct ATTServerConnection: Sendable {
    /// The minimum LE ATT MTU and the MTU before any exchange.
    public static let minimumMTU = 23
    /// Largest ATT MTU (Core spec: attribute values are at most 512 bytes).
    public static let maximumMTU: UInt16 = 517
    /// Messages held for a phone that has not subscribed yet, or whose indications are still
    /// being confirmed. Past this, `send` throws instead of growing without bound.
    public static let maxQueuedMessages = 4

    public let database: GATTDatabase
    /// The Server Rx MTU this side announces (clamped to 23...517).
    public let preferredMTU: UInt16
    /// The negotiated ATT MTU: 23 until the first Exchange MTU, then min(client, preferred).
    public internal(set) var mtu: Int = ATTServerConnection.minimumMTU
    public internal(set) var isClosed = false

    var mtuExchanged = false
    /// CCCD values by handle; per connection, as the spec requires for unbonded clients.
    var cccd: [UInt16: UInt16] = [:]
    var reassembler = MessageReassembler()
    /// Messages waiting for the phone to subscribe (fragmented on release, at the MTU then).
    var unsubscribedQueue: [Bytes] = []
    /// Fragment values of messages being indicated, one at a time.
    var indicationQueue: [[Bytes]] = []
    var awaitingConfirmation = false

    let phoneToCarHandle: UInt16?
    let carToPhoneHandle: UInt16?
    let carToPhoneCCCD: UInt16?

    public init(database: GATTDatabase, preferredMTU: UInt16 = 247) {
        self.database = database
        self.preferredMTU = min(max(preferredMTU, UInt16(Self.minimumMTU)), Self.maximumMTU)
        phoneToCarHandle = database.valueHandle(of: KeyServiceUUIDs.phoneToCar)
        carToPhoneHandle = database.valueHandle(of: KeyServiceUUIDs.carToPhone)
        carToPhoneCCCD = carToPhoneHandle.flatMap { database.cccdHandle(ofValue: $0) }
    }

    /// The phone enabled notifications or indications on the car-to-phone characteristic.
    public var isSubscribed: Bool { notificationsEnabled || indicationsEnabled }
    var notificationsEnabled: Bool { carToPhoneCCCD.map { cccdValue($0) & 0x0001 != 0 } ?? false }
    var indicationsEnabled: Bool { carToPhoneCCCD.map { cccdValue($0) & 0x0002 != 0 } ?? false }

    /// Messages accepted by `send` but not yet fully handed out as PDUs.
    public var queuedMessageCount: Int { unsubscribedQueue.count + indicationQueue.count }

    func cccdValue(_ handle: UInt16) -> UInt16 { cccd[handle] ?? 0 }

    /// The value a read sees: CCCDs are per connection, everything else is static.
    func currentValue(_ attribute: GATTAttribute) -> Bytes {
        if case .cccd = attribute.kind { return ATTPDU.le16(cccdValue(attribute.handle)) }
        return attribute.value
    }

    /// Handles one PDU from the phone.
    public mutating func receive(_ pdu: Bytes) -> ATTServerOutput {
        guard !isClosed, let opcode = pdu.first else { return ATTServerOutput() }
        // The client may not send more than the MTU; a longer request is malformed.
        guard pdu.count <= mtu else {
            guard ATTOpcode.isRequest(opcode) else { return ATTServerOutput() }
            return ATTServerOutput(pdus: [ATTPDU.errorResponse(request: opcode, handle: 0, code: .invalidPDU)])
        }
        let request: ATTRequest
        do throws(ATTRequestError) {
            request = try ATTRequest.parse(pdu)
        } catch {
            switch error {
            case .empty, .ignored: return ATTServerOutput()
            case .invalidPDU(let code):
                return ATTServerOutput(pdus: [ATTPDU.errorResponse(request: code, handle: 0, code: .invalidPDU)])
            case .notSupported(let code):
                return ATTServerOutput(pdus: [ATTPDU.errorResponse(request: code, handle: 0, code: .requestNotSupported)])
            }
        }
        switch request {
        case .exchangeMTU(let clientMTU):
            return ATTServerOutput(pdus: [exchangeMTU(clientMTU: clientMTU)])
        case .findInformation(let start, let end):
            return ATTServerOutput(pdus: [findInformation(start: start, end: end)])
        case .findByTypeValue(let start, let end, let type, let value):
            return ATTServerOutput(pdus: [findByTypeValue(start: start, end: end, type: type, value: value)])
        case .readByType(let start, let end, let type):
            return ATTServerOutput(pdus: [readByType(start: start, end: end, type: type)])
        case .readByGroupType(let start, let end, let type):
            return ATTServerOutput(pdus: [readByGroupType(start: start, end: end, type: type)])
        case .read(let handle):
            return ATTServerOutput(pdus: [read(handle: handle, offset: nil)])
        case .readBlob(let handle, let offset):
            return ATTServerOutput(pdus: [read(handle: handle, offset: offset)])
        case .write(let handle, let value):
            return writeRequest(handle: handle, value: value)
        case .writeCommand(let handle, let value):
            return writeCommand(handle: handle, value: value)
        case .handleValueConfirmation:
            return ATTServerOutput(pdus: confirmationReceived())
        }
    }

    /// Spec: a client sends Exchange MTU at most once. A repeat is answered the same way but
    /// keeps the first result, so fragments already cut stay valid.
    private mutating func exchangeMTU(clientMTU: UInt16) -> Bytes {
        if !mtuExchanged {
            mtuExchanged = true
            mtu = max(Self.minimumMTU, Int(min(clientMTU, preferredMTU)))
        }
        return ATTPDU.exchangeMTUResponse(serverMTU: preferredMTU)
    }

    static func error(_ request: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> Bytes {
        ATTPDU.errorResponse(request: request.rawValue, handle: handle, code: code)
    }
}

// The phone's ATT client (`carkey phone --ble`), sans-IO: exchanges the MTU, finds the key
// service and its characteristics, subscribes, then carries protocol messages as fragments.
// One request is outstanding at a time, as ATT requires, so each response drives the next step.
import Protocol

/// What the client wants sent, and what arrived, after one step.
public struct ATTClientOutput: Equatable, Sendable {
    public var pdus: [Bytes] = []
    public var messages: [Bytes] = []
    /// True once, on the step that completed the subscription.
    public var becameReady = false

    public init(pdus: [Bytes] = [], messages: [Bytes] = [], becameReady: Bool = false) {
        self.pdus = pdus
        self.messages = messages
        self.becameReady = becameReady
    }
}

public struct ATTClientConnection: Sendable {
    /// How the phone asks to hear from the car (the CCCD value it writes).
    public enum Subscription: UInt16, Sendable {
        case notifications = 0x0001
        case indications = 0x0002
    }

    enum State: Equatable, Sendable {
        case idle, exchangingMTU, findingService, discoveringCharacteristics, findingCCCD, subscribing, ready, failed
    }

    struct Characteristic: Equatable, Sendable {
        var declaration: UInt16
        var properties: GATTCharacteristicProperties
        var valueHandle: UInt16
        var uuid: ATTUUID
    }

    public let clientMTU: UInt16
    public let subscription: Subscription
    /// The negotiated ATT MTU (23 until the exchange).
    public internal(set) var mtu = ATTServerConnection.minimumMTU
    var state = State.idle
    var serviceStart: UInt16 = 0
    var serviceEnd: UInt16 = 0
    var characteristics: [Characteristic] = []
    /// The handle the next discovery request starts at (responses must move forward).
    var nextHandle: UInt16 = 0
    var cccdRangeEnd: UInt16 = 0
    public internal(set) var phoneToCarHandle: UInt16?
    public internal(set) var carToPhoneHandle: UInt16?
    public internal(set) var cccdHandle: UInt16?
    var reassembler = MessageReassembler()

    public init(clientMTU: UInt16 = 247, subscription: Subscription = .notifications) {
        self.clientMTU = max(clientMTU, UInt16(ATTServerConnection.minimumMTU))
        self.subscription = subscription
    }

    public var isReady: Bool { state == .ready }

    /// The first PDU: Exchange MTU.
    public mutating func start() -> [Bytes] {
        guard state == .idle else { return [] }
        state = .exchangingMTU
        return [ATTPDU.exchangeMTURequest(clientMTU: clientMTU)]
    }

    /// Write Commands carrying `message`'s fragments (no responses, so no round trips).
    public func send(message: Bytes) throws(ATTClientError) -> [Bytes] {
        guard state == .ready, let handle = phoneToCarHandle else { throw .notReady }
        do throws(FragmentError) {
            return try MessageFragmenter.fragments(of: message, maxFragment: mtu - 3)
                .map { ATTPDU.writeCommand(handle: handle, value: $0) }
        } catch {
            throw .invalidMessage(error)
        }
    }

    /// Handles one PDU from the car. After a throw the client is failed and ignores input.
    public mutating func receive(_ pdu: Bytes) throws(ATTClientError) -> ATTClientOutput {
        guard state != .failed else { return ATTClientOutput() }
        do throws(ATTClientError) {
            return try step(pdu)
        } catch {
            state = .failed
            throw error
        }
    }

    private mutating func step(_ pdu: Bytes) throws(ATTClientError) -> ATTClientOutput {
        guard let opcode = pdu.first else { throw .malformedPDU(opcode: 0) }
        switch (ATTOpcode(rawValue: opcode), state) {
        case (.handleValueNotification?, _), (.handleValueIndication?, _):
            return try valueFromCar(pdu)
        case (.errorResponse?, _):
            guard pdu.count == 5 else { throw .malformedPDU(opcode: opcode) }
            return try errorResponse(request: pdu[1], handle: ATTPDU.u16(pdu, 2), code: ATTErrorCode(rawValue: pdu[4]))
        case (.exchangeMTUResponse?, .exchangingMTU):
            guard pdu.count == 3 else { throw .malformedPDU(opcode: opcode) }
            mtu = max(ATTServerConnection.minimumMTU, Int(min(ATTPDU.u16(pdu, 1), clientMTU)))
            state = .findingService
            return ATTClientOutput(pdus: [ATTPDU.findByTypeValueRequest(
                start: 0x0001, end: 0xFFFF, type: 0x2800, value: KeyServiceUUIDs.service.wireBytes)])
        case (.findByTypeValueResponse?, .findingService):
            guard pdu.count >= 5, (pdu.count - 1) % 4 == 0 else { throw .malformedPDU(opcode: opcode) }
            serviceStart = ATTPDU.u16(pdu, 1)
            serviceEnd = ATTPDU.u16(pdu, 3)
            guard serviceStart != 0, serviceEnd >= serviceStart else { throw .malformedPDU(opcode: opcode) }
            state = .discoveringCharacteristics
            return ATTClientOutput(pdus: [readCharacteristics(from: serviceStart)])
        case (.readByTypeResponse?, .discoveringCharacteristics):
            return try characteristicsFound(pdu)
        case (.findInformationResponse?, .findingCCCD):
            return try descriptorsFound(pdu)
        case (.writeResponse?, .subscribing):
            guard pdu.count == 1 else { throw .malformedPDU(opcode: opcode) }
            state = .ready
            return ATTClientOutput(becameReady: true)
        default:
            throw .unexpectedPDU(opcode: opcode)
        }
    }

    mutating func readCharacteristics(from start: UInt16) -> Bytes {
        nextHandle = start
        return ATTPDU.readByTypeRequest(start: start, end: serviceEnd, type: GATTUUIDs.characteristic)
    }

    /// Attribute Not Found ends a discovery step; any other error ends the link.
    private mutating func errorResponse(request: UInt8, handle: UInt16, code: ATTErrorCode) throws(ATTClientError) -> ATTClientOutput {
        if code == .attributeNotFound {
            switch state {
            case .findingService where request == ATTOpcode.findByTypeValueRequest.rawValue:
                throw .serviceNotFound
            case .discoveringCharacteristics where request == ATTOpcode.readByTypeRequest.rawValue:
                return try characteristicsComplete()
            case .findingCCCD where request == ATTOpcode.findInformationRequest.rawValue:
                throw .descriptorMissing
            default: break
            }
        }
        throw .errorResponse(request: request, handle: handle, code: code)
    }

    /// Notifications and indications: only the car-to-phone value carries fragments; every
    /// indication is confirmed, whatever its handle, or the car could send no more.
    private mutating func valueFromCar(_ pdu: Bytes) throws(ATTClientError) -> ATTClientOutput {
        guard pdu.count >= 3 else { throw .malformedPDU(opcode: pdu[0]) }
        var output = ATTClientOutput()
        if pdu[0] == ATTOpcode.handleValueIndication.rawValue { output.pdus = [ATTPDU.confirmation] }
        guard state == .subscribing || state == .ready, ATTPDU.u16(pdu, 1) == carToPhoneHandle else { return output }
        do throws(FragmentError) {
            if let message = try reassembler.append(Array(pdu[3...])) { output.messages = [message] }
        } catch {
            throw .fragment(error)
        }
        return output
    }
}

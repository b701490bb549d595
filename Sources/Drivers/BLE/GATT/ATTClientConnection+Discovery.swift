// Parsing the discovery responses. Every list must move forward through the handles, so a
// car that repeats itself cannot keep the phone looping.
import Protocol

extension ATTClientConnection {
    mutating func characteristicsFound(_ pdu: Bytes) throws(ATTClientError) -> ATTClientOutput {
        let opcode = pdu[0]
        guard pdu.count >= 2 else { throw .malformedPDU(opcode: opcode) }
        let length = Int(pdu[1])
        // Declaration value: properties (1), value handle (2), UUID (2 or 16).
        guard length == 7 || length == 21, (pdu.count - 2) % length == 0, pdu.count > 2 else {
            throw .malformedPDU(opcode: opcode)
        }
        var last: UInt16 = 0
        var offset = 2
        while offset < pdu.count {
            let declaration = ATTPDU.u16(pdu, offset)
            let valueHandle = ATTPDU.u16(pdu, offset + 3)
            guard declaration >= nextHandle, declaration > last, declaration <= serviceEnd,
                  valueHandle > declaration, valueHandle <= serviceEnd,
                  let uuid = ATTUUID(wire: pdu[(offset + 5)..<(offset + length)]) else {
                throw .malformedPDU(opcode: opcode)
            }
            characteristics.append(Characteristic(declaration: declaration,
                                                  properties: GATTCharacteristicProperties(rawValue: pdu[offset + 2]),
                                                  valueHandle: valueHandle, uuid: uuid))
            last = declaration
            offset += length
        }
        guard last < serviceEnd else { return try characteristicsComplete() }
        return ATTClientOutput(pdus: [readCharacteristics(from: last + 1)])
    }

    /// Both key characteristics found: look for the CCCD between the car-to-phone value and
    /// the next declaration (or the service end).
    mutating func characteristicsComplete() throws(ATTClientError) -> ATTClientOutput {
        guard let phoneToCar = characteristics.first(where: { $0.uuid == KeyServiceUUIDs.phoneToCar }),
              phoneToCar.properties.contains(.writeWithoutResponse) else {
            throw .characteristicMissing(KeyServiceUUIDs.phoneToCar)
        }
        let needed: GATTCharacteristicProperties = subscription == .notifications ? .notify : .indicate
        guard let carToPhone = characteristics.first(where: { $0.uuid == KeyServiceUUIDs.carToPhone }),
              carToPhone.properties.contains(needed) else {
            throw .characteristicMissing(KeyServiceUUIDs.carToPhone)
        }
        phoneToCarHandle = phoneToCar.valueHandle
        carToPhoneHandle = carToPhone.valueHandle
        let nextDeclaration = characteristics.map(\.declaration).filter { $0 > carToPhone.valueHandle }.min()
        cccdRangeEnd = nextDeclaration.map { $0 - 1 } ?? serviceEnd
        guard carToPhone.valueHandle < cccdRangeEnd else { throw .descriptorMissing }
        state = .findingCCCD
        return ATTClientOutput(pdus: [findDescriptors(from: carToPhone.valueHandle + 1)])
    }

    private mutating func findDescriptors(from start: UInt16) -> Bytes {
        nextHandle = start
        return ATTPDU.findInformationRequest(start: start, end: cccdRangeEnd)
    }

    mutating func descriptorsFound(_ pdu: Bytes) throws(ATTClientError) -> ATTClientOutput {
        let opcode = pdu[0]
        guard pdu.count >= 2, pdu[1] == 1 || pdu[1] == 2 else { throw .malformedPDU(opcode: opcode) }
        let entry = pdu[1] == 1 ? 4 : 18
        guard pdu.count > 2, (pdu.count - 2) % entry == 0 else { throw .malformedPDU(opcode: opcode) }
        var last: UInt16 = 0
        var offset = 2
        while offset < pdu.count {
            let handle = ATTPDU.u16(pdu, offset)
            guard handle >= nextHandle, handle > last, handle <= cccdRangeEnd,
                  let type = ATTUUID(wire: pdu[(offset + 2)..<(offset + entry)]) else {
                throw .malformedPDU(opcode: opcode)
            }
            if type == GATTUUIDs.clientCharacteristicConfiguration {
                cccdHandle = handle
                state = .subscribing
                return ATTClientOutput(pdus: [ATTPDU.writeRequest(handle: handle, value: ATTPDU.le16(subscription.rawValue))])
            }
            last = handle
            offset += entry
        }
        guard last < cccdRangeEnd else { throw .descriptorMissing }
        return ATTClientOutput(pdus: [findDescriptors(from: last + 1)])
    }
}

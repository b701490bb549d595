// The server's discovery and read requests (Core spec Vol 3 Part F, 3.4.3 and 3.4.4): every
// response holds as many same-size entries as fit in the MTU, and the client asks again from
// the handle after the last one.
import Protocol

extension ATTServerConnection {
    /// Invalid Handle for start 0 or start > end, reported with the start handle.
    private func checkRange(_ request: ATTOpcode, _ start: UInt16, _ end: UInt16) -> Bytes? {
        guard start == 0 || start > end else { return nil }
        return Self.error(request, start, .invalidHandle)
    }

    func findInformation(start: UInt16, end: UInt16) -> Bytes {
        if let error = checkRange(.findInformationRequest, start, end) { return error }
        let found = database.attributes(from: start, to: end)
        guard let first = found.first else { return Self.error(.findInformationRequest, start, .attributeNotFound) }
        let uuidLength = first.type.wireBytes.count
        var pdu: Bytes = [ATTOpcode.findInformationResponse.rawValue, first.type.is16Bit ? 0x01 : 0x02]
        for attribute in found {
            guard attribute.type.wireBytes.count == uuidLength, pdu.count + 2 + uuidLength <= mtu else { break }
            pdu += ATTPDU.le16(attribute.handle) + attribute.type.wireBytes
        }
        return pdu
    }

    func findByTypeValue(start: UInt16, end: UInt16, type: ATTUUID, value: Bytes) -> Bytes {
        if let error = checkRange(.findByTypeValueRequest, start, end) { return error }
        var pdu: Bytes = [ATTOpcode.findByTypeValueResponse.rawValue]
        for attribute in database.attributes(from: start, to: end)
        where attribute.type == type && attribute.isReadable && currentValue(attribute) == value {
            guard pdu.count + 4 <= mtu else { break }
            var groupEnd = attribute.handle
            if case .service(let end) = attribute.kind { groupEnd = end }
            pdu += ATTPDU.le16(attribute.handle) + ATTPDU.le16(groupEnd)
        }
        guard pdu.count > 1 else { return Self.error(.findByTypeValueRequest, start, .attributeNotFound) }
        return pdu
    }

    func readByType(start: UInt16, end: UInt16, type: ATTUUID) -> Bytes {
        if let error = checkRange(.readByTypeRequest, start, end) { return error }
        let matches = database.attributes(from: start, to: end).filter { $0.type == type }
        guard let first = matches.first else { return Self.error(.readByTypeRequest, start, .attributeNotFound) }
        guard first.isReadable else { return Self.error(.readByTypeRequest, first.handle, .readNotPermitted) }
        // A long value is cut to MTU - 4 (at most 253) bytes; the client reads the rest by Read Blob.
        let maxValue = min(mtu - 4, 253)
        let valueLength = min(currentValue(first).count, maxValue)
        var pdu: Bytes = [ATTOpcode.readByTypeResponse.rawValue, UInt8(2 + valueLength)]
        for attribute in matches {
            let value = currentValue(attribute).prefix(maxValue)
            guard attribute.isReadable, value.count == valueLength, pdu.count + 2 + valueLength <= mtu else { break }
            pdu += ATTPDU.le16(attribute.handle) + value
        }
        return pdu
    }

    func readByGroupType(start: UInt16, end: UInt16, type: ATTUUID) -> Bytes {
        if let error = checkRange(.readByGroupTypeRequest, start, end) { return error }
        guard type == GATTUUIDs.primaryService || type == GATTUUIDs.secondaryService else {
            return Self.error(.readByGroupTypeRequest, start, .unsupportedGroupType)
        }
        var entries: [(handle: UInt16, groupEnd: UInt16, value: Bytes)] = []
        for attribute in database.attributes(from: start, to: end) where attribute.type == type {
            if case .service(let groupEnd) = attribute.kind {
                entries.append((attribute.handle, groupEnd, attribute.value))
            }
        }
        guard let first = entries.first else { return Self.error(.readByGroupTypeRequest, start, .attributeNotFound) }
        let maxValue = min(mtu - 6, 251)
        let valueLength = min(first.value.count, maxValue)
        var pdu: Bytes = [ATTOpcode.readByGroupTypeResponse.rawValue, UInt8(4 + valueLength)]
        for entry in entries {
            let value = entry.value.prefix(maxValue)
            guard value.count == valueLength, pdu.count + 4 + valueLength <= mtu else { break }
            pdu += ATTPDU.le16(entry.handle) + ATTPDU.le16(entry.groupEnd) + value
        }
        return pdu
    }

    /// Read (offset nil) and Read Blob. Read Blob is answered on short values too: Attribute
    /// Not Long is optional in the spec, and an offset equal to the length gives an empty part,
    /// which is how a client learns it has read everything.
    func read(handle: UInt16, offset: UInt16?) -> Bytes {
        let request: ATTOpcode = offset == nil ? .readRequest : .readBlobRequest
        guard let attribute = database.attribute(handle) else { return Self.error(request, handle, .invalidHandle) }
        guard attribute.isReadable else { return Self.error(request, handle, .readNotPermitted) }
        let value = currentValue(attribute)
        let from = Int(offset ?? 0)
        guard from <= value.count else { return Self.error(request, handle, .invalidOffset) }
        let opcode: ATTOpcode = offset == nil ? .readResponse : .readBlobResponse
        return [opcode.rawValue] + value[from...].prefix(mtu - 1)
    }
}

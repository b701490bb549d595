// Writes from the phone: CCCDs (subscriptions) and the phone-to-car value, whose every write
// is one fragment of a protocol message.
import Protocol

extension ATTServerConnection {
    mutating func writeRequest(handle: UInt16, value: Bytes) -> ATTServerOutput {
        guard let attribute = database.attribute(handle) else {
            return ATTServerOutput(pdus: [Self.error(.writeRequest, handle, .invalidHandle)])
        }
        switch attribute.kind {
        case .cccd(_, let properties):
            guard value.count == 2 else {
                return ATTServerOutput(pdus: [Self.error(.writeRequest, handle, .invalidAttributeValueLength)])
            }
            let bits = ATTPDU.u16(value, 0)
            // Only the bits the characteristic supports; reserved bits are refused too.
            var allowed: UInt16 = 0
            if properties.contains(.notify) { allowed |= 0x0001 }
            if properties.contains(.indicate) { allowed |= 0x0002 }
            guard bits & ~allowed == 0 else {
                return ATTServerOutput(pdus: [Self.error(.writeRequest, handle, .cccdImproperlyConfigured)])
            }
            setCCCD(handle, bits)
            var pdus = [ATTPDU.writeResponse]
            if handle == carToPhoneCCCD { pdus += releaseAfterSubscriptionChange() }
            return ATTServerOutput(pdus: pdus)
        case .characteristicValue(let properties) where handle == phoneToCarHandle && properties.contains(.write):
            // The response confirms the fragment was accepted, so it comes only after the check.
            var output = acceptFragment(value)
            if output.fatalError == nil {
                output.pdus = [ATTPDU.writeResponse]
            } else {
                output.pdus = [Self.error(.writeRequest, handle, .messageRejected)]
            }
            return output
        case .service, .characteristicDeclaration, .characteristicValue:
            return ATTServerOutput(pdus: [Self.error(.writeRequest, handle, .writeNotPermitted)])
        }
    }

    /// Write Command: only the phone-to-car value acts on it; anything else is dropped, as
    /// commands never get a response (a CCCD must be written with a Write Request).
    mutating func writeCommand(handle: UInt16, value: Bytes) -> ATTServerOutput {
        guard handle == phoneToCarHandle, let attribute = database.attribute(handle),
              case .characteristicValue(let properties) = attribute.kind,
              properties.contains(.writeWithoutResponse) else { return ATTServerOutput() }
        return acceptFragment(value)
    }

    private mutating func acceptFragment(_ fragment: Bytes) -> ATTServerOutput {
        do throws(FragmentError) {
            guard let message = try reassembler.append(fragment) else { return ATTServerOutput() }
            return ATTServerOutput(messages: [message])
        } catch {
            close()
            return ATTServerOutput(fatalError: error)
        }
    }
}

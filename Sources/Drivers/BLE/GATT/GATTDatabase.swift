// A static attribute table. Handles are assigned in description order starting at 1: per
// service its declaration, then per characteristic its declaration, its value and, when it
// notifies or indicates, its CCCD. Nothing is added or removed at run time, so the car never
// needs Service Changed indications and a phone may cache the handles.
import Protocol

public struct GATTAttribute: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// A primary service declaration; `groupEnd` is the service's last handle.
        case service(groupEnd: UInt16)
        case characteristicDeclaration
        case characteristicValue(GATTCharacteristicProperties)
        /// A Client Characteristic Configuration descriptor: its value is per connection.
        case cccd(valueHandle: UInt16, properties: GATTCharacteristicProperties)
    }

    public let handle: UInt16
    public let type: ATTUUID
    /// The stored value (declarations, static characteristic values). A CCCD's stored value is
    /// the default 0x0000; the connection holds the real one.
    public let value: Bytes
    public let kind: Kind

    public var isReadable: Bool {
        if case .characteristicValue(let properties) = kind { return properties.contains(.read) }
        return true
    }

    public var isWritable: Bool {
        switch kind {
        case .characteristicValue(let properties): return !properties.isDisjoint(with: [.write, .writeWithoutResponse])
        case .cccd: return true
        case .service, .characteristicDeclaration: return false
        }
    }
}

public struct GATTDatabase: Equatable, Sendable {
    /// Attribute with handle h is at index h - 1.
    public let attributes: [GATTAttribute]

    /// Lays out `services`. The description comes from code, not from a peer; a table past
    /// handle 0xFFFF is a programming error.
    public init(services: [GATTServiceDescription]) {
        var table: [GATTAttribute] = []
        for service in services {
            let first = table.count + 1
            var size = 1
            for characteristic in service.characteristics {
                size += characteristic.properties.isDisjoint(with: [.notify, .indicate]) ? 2 : 3
            }
            precondition(first + size - 1 <= 0xFFFF, "GATT database exceeds the handle space")
            let groupEnd = UInt16(first + size - 1)
            table.append(GATTAttribute(handle: UInt16(first), type: GATTUUIDs.primaryService,
                                       value: service.uuid.wireBytes, kind: .service(groupEnd: groupEnd)))
            for characteristic in service.characteristics {
                let declaration = UInt16(table.count + 1)
                let valueHandle = declaration + 1
                table.append(GATTAttribute(
                    handle: declaration, type: GATTUUIDs.characteristic,
                    value: [characteristic.properties.rawValue] + ATTPDU.le16(valueHandle) + characteristic.uuid.wireBytes,
                    kind: .characteristicDeclaration))
                table.append(GATTAttribute(handle: valueHandle, type: characteristic.uuid, value: characteristic.value,
                                           kind: .characteristicValue(characteristic.properties)))
                if !characteristic.properties.isDisjoint(with: [.notify, .indicate]) {
                    table.append(GATTAttribute(handle: valueHandle + 1, type: GATTUUIDs.clientCharacteristicConfiguration,
                                               value: [0, 0],
                                               kind: .cccd(valueHandle: valueHandle, properties: characteristic.properties)))
                }
            }
        }
        attributes = table
    }

    public var lastHandle: UInt16 { UInt16(attributes.count) }

    public func attribute(_ handle: UInt16) -> GATTAttribute? {
        guard handle >= 1, Int(handle) <= attributes.count else { return nil }
        return attributes[Int(handle) - 1]
    }

    /// Attributes with handles in start...end (both valid, start <= end), in handle order.
    func attributes(from start: UInt16, to end: UInt16) -> ArraySlice<GATTAttribute> {
        let lower = Int(start) - 1
        let upper = min(Int(end), attributes.count)
        guard lower < upper else { return [] }
        return attributes[lower..<upper]
    }

    /// The value handle of the first characteristic with `uuid`.
    public func valueHandle(of uuid: ATTUUID) -> UInt16? {
        attributes.first { attribute in
            if case .characteristicValue = attribute.kind { return attribute.type == uuid }
            return false
        }?.handle
    }

    /// The CCCD handle of the characteristic whose value handle is `valueHandle`.
    public func cccdHandle(ofValue valueHandle: UInt16) -> UInt16? {
        guard valueHandle < 0xFFFF, let candidate = attribute(valueHandle + 1),
              case .cccd(let owner, _) = candidate.kind, owner == valueHandle else { return nil }
        return candidate.handle
    }
}

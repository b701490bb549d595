// What a GATT database is built from: services and their characteristics, in order. The
// handles follow from the order alone (GATTDatabase), so a description fixes the layout.
import Protocol

/// Characteristic properties (Core spec Vol 3 Part G, 3.3.1.1).
public struct GATTCharacteristicProperties: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = GATTCharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = GATTCharacteristicProperties(rawValue: 0x04)
    public static let write = GATTCharacteristicProperties(rawValue: 0x08)
    public static let notify = GATTCharacteristicProperties(rawValue: 0x10)
    public static let indicate = GATTCharacteristicProperties(rawValue: 0x20)
}

public struct GATTCharacteristicDescription: Equatable, Sendable {
    public var uuid: ATTUUID
    public var properties: GATTCharacteristicProperties
    /// The value a Read returns (static); ignored for values that are only written or notified.
    public var value: Bytes

    public init(uuid: ATTUUID, properties: GATTCharacteristicProperties, value: Bytes = []) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
    }
}

public struct GATTServiceDescription: Equatable, Sendable {
    public var uuid: ATTUUID
    public var characteristics: [GATTCharacteristicDescription]

    public init(uuid: ATTUUID, characteristics: [GATTCharacteristicDescription]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

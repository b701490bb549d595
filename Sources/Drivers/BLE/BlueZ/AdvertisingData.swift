// Advertising data: a run of AD structures, each one length byte (covering type and data), one
// type byte and the data. Builder for the car's advertisement, bounded parser for the scanner.

public enum AdvertisingDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A structure's length byte runs past the end of the data.
    case truncatedStructure(offset: Int, declared: Int, available: Int)
    /// The built data does not fit the space the kernel leaves (31 minus its own flags field).
    case tooLong(length: Int, limit: Int)
    /// One structure's data is longer than a length byte can describe.
    case structureTooLong(type: UInt8, length: Int)
    /// An argument of the wrong size (the rotating identifier, a UUID string).
    case invalidField(String)

    public var description: String {
        switch self {
        case .truncatedStructure(let offset, let declared, let available):
            return "AD structure at offset \(offset) declares \(declared) bytes but \(available) remain"
        case .tooLong(let length, let limit):
            return "advertising data is \(length) bytes, limit \(limit)"
        case .structureTooLong(let type, let length):
            return "AD structure type 0x\(String(type, radix: 16)) data of \(length) bytes is too long"
        case .invalidField(let reason):
            return "advertising field: \(reason)"
        }
    }
}

public struct ADStructure: Equatable, Sendable {
    public let type: UInt8
    public let data: [UInt8]

    public init(type: UInt8, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    public static let flagsType: UInt8 = 0x01
    public static let completeUUID128Type: UInt8 = 0x07
    public static let shortenedNameType: UInt8 = 0x08
    public static let completeNameType: UInt8 = 0x09
    public static let manufacturerSpecificType: UInt8 = 0xFF

    public static func flags(_ value: UInt8) -> ADStructure { ADStructure(type: flagsType, data: [value]) }

    /// Complete List of 128-bit Service UUIDs; each UUID goes on the air least significant byte first.
    public static func completeUUID128List(_ uuids: [UUID128]) -> ADStructure {
        ADStructure(type: completeUUID128Type, data: uuids.flatMap { $0.bigEndianBytes.reversed() })
    }

    public static func manufacturerSpecific(companyID: UInt16, payload: [UInt8]) -> ADStructure {
        ADStructure(type: manufacturerSpecificType, data: [UInt8(companyID & 0xFF), UInt8(companyID >> 8)] + payload)
    }

    public static func completeName(_ name: String) -> ADStructure { ADStructure(type: completeNameType, data: Array(name.utf8)) }
    public static func shortenedName(_ name: String) -> ADStructure { ADStructure(type: shortenedNameType, data: Array(name.utf8)) }
}

/// A 128-bit UUID held in its printed (big-endian) byte order.
public struct UUID128: Hashable, Sendable, CustomStringConvertible {
    public let bigEndianBytes: [UInt8]

    public init?(bigEndianBytes: [UInt8]) {
        guard bigEndianBytes.count == 16 else { return nil }
        self.bigEndianBytes = bigEndianBytes
    }

    /// "c0de0001-0c4b-4f70-656e-4361724b6579"; dashes in the 8-4-4-4-12 places only.
    public init?(_ text: String) {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
        var bytes = [UInt8]()
        let hex = Array(groups.joined().utf8)
        for i in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bigEndianBytes = bytes
    }

    public var description: String {
        let hex = bigEndianBytes.map { $0 < 0x10 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}

public enum AdvertisingData {
    /// Legacy advertising and scan response data are at most 31 bytes each.
    public static let legacyLimit = 31
    /// With the discoverable flag the kernel prepends Flags (3 bytes), leaving 28 for us.
    public static let limitWithKernelFlags = legacyLimit - 3

    /// Concatenates structures; throws when the result exceeds `limit`.
    public static func build(_ structures: [ADStructure], limit: Int = limitWithKernelFlags) throws(AdvertisingDataError) -> [UInt8] {
        var out = [UInt8]()
        for s in structures {
            guard s.data.count <= 254 else { throw .structureTooLong(type: s.type, length: s.data.count) }
            out += [UInt8(s.data.count + 1), s.type] + s.data
        }
        guard out.count <= limit else { throw .tooLong(length: out.count, limit: limit) }
        return out
    }

    /// Splits data into structures. A zero length byte ends the data (the rest is padding).
    public static func parse(_ bytes: [UInt8]) throws(AdvertisingDataError) -> [ADStructure] {
        var structures = [ADStructure]()
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            let available = bytes.count - offset - 1
            guard length <= available else { throw .truncatedStructure(offset: offset, declared: length, available: available) }
            structures.append(ADStructure(type: bytes[offset + 1], data: Array(bytes[offset + 2..<offset + 1 + length])))
            offset += 1 + length
        }
        return structures
    }
}

/// The car's advertisement: the key service UUID and the 6-byte rotating identifier in
/// manufacturer data under company id 0xFFFF (the "no company, testing" id). 18 + 10 = 28 bytes,
/// exactly what is left after the kernel's Flags. The name goes into the scan response by the
/// kernel (flag 0x40), so the scan response we pass is empty.
public enum CarAdvertisement {
    public static let keyServiceUUID = UUID128("c0de0001-0c4b-4f70-656e-4361724b6579")!
    public static let companyID: UInt16 = 0xFFFF
    public static let identifierLength = 6

    public static func advertisingData(rotatingIdentifier: [UInt8]) throws(AdvertisingDataError) -> [UInt8] {
        guard rotatingIdentifier.count == identifierLength else {
            throw .invalidField("rotating identifier is \(rotatingIdentifier.count) bytes, must be \(identifierLength)")
        }
        return try AdvertisingData.build([
            .completeUUID128List([keyServiceUUID]),
            .manufacturerSpecific(companyID: companyID, payload: rotatingIdentifier),
        ])
    }
}

/// What a scanner learns from one advertisement's AD structures.
public struct ParsedAdvertisement: Equatable, Sendable {
    public var flags: UInt8?
    public var serviceUUIDs: [UUID128] = []
    /// Company id to payload (after the 2-byte id).
    public var manufacturerData: [UInt16: [UInt8]] = [:]
    public var completeName: String?
    public var shortenedName: String?

    public init(structures: [ADStructure]) {
        for s in structures {
            switch s.type {
            case ADStructure.flagsType where s.data.count >= 1:
                flags = s.data[0]
            case ADStructure.completeUUID128Type, 0x06: // complete or incomplete 128-bit list
                var i = 0
                while i + 16 <= s.data.count {
                    serviceUUIDs.append(UUID128(bigEndianBytes: s.data[i..<i + 16].reversed())!)
                    i += 16
                }
            case ADStructure.manufacturerSpecificType where s.data.count >= 2:
                manufacturerData[UInt16(s.data[0]) | UInt16(s.data[1]) << 8] = Array(s.data[2...])
            case ADStructure.completeNameType:
                completeName = String(decoding: s.data, as: UTF8.self)
            case ADStructure.shortenedNameType:
                shortenedName = String(decoding: s.data, as: UTF8.self)
            default:
                break
            }
        }
    }

    public var name: String? { completeName ?? shortenedName }

    /// The car's rotating identifier, if this is a car advertisement.
    public var carIdentifier: [UInt8]? {
        guard serviceUUIDs.contains(CarAdvertisement.keyServiceUUID),
              let data = manufacturerData[CarAdvertisement.companyID], data.count == CarAdvertisement.identifierLength
        else { return nil }
        return data
    }
}

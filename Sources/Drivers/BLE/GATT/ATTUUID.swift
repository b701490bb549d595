// Attribute types: 16-bit Bluetooth SIG UUIDs and full 128-bit UUIDs. ATT carries both
// little-endian, so the stored form is the wire form.
import Protocol

public struct ATTUUID: Hashable, Sendable, CustomStringConvertible {
    /// Little-endian wire bytes: 2 for a SIG-assigned UUID, 16 otherwise.
    public let wireBytes: Bytes

    /// Bluetooth Base UUID 00000000-0000-1000-8000-00805F9B34FB, little-endian, with the
    /// 16-bit value at bytes 12...13 zeroed.
    private static let baseLittleEndian: Bytes = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80,
                                                  0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]

    public init(_ short: UInt16) {
        wireBytes = [UInt8(short & 0xFF), UInt8(short >> 8)]
    }

    /// From 2 or 16 wire bytes. A 128-bit UUID built on the Base UUID becomes its 16-bit form,
    /// so a client asking for 0x2803 in long form still matches.
    public init?(wire: ArraySlice<UInt8>) {
        switch wire.count {
        case 2: wireBytes = Bytes(wire)
        case 16:
            let bytes = Bytes(wire)
            var masked = bytes
            masked[12] = 0
            masked[13] = 0
            if masked == Self.baseLittleEndian && bytes[14] == 0 && bytes[15] == 0 {
                wireBytes = [bytes[12], bytes[13]]
            } else {
                wireBytes = bytes
            }
        default: return nil
        }
    }

    /// From the canonical text form "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (big-endian).
    public init?(string: String) {
        let digits = String(string.filter { $0 != "-" })
        guard string.count == 36, digits.count == 32, let bigEndian = Bytes(hex: digits) else { return nil }
        self.init(wire: ArraySlice(bigEndian.reversed()))
    }

    public var is16Bit: Bool { wireBytes.count == 2 }

    public var description: String {
        let bigEndian = Bytes(wireBytes.reversed())
        guard !is16Bit else { return "0x" + bigEndian.hexString }
        let hex = Array(bigEndian.hexString)
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }
        return groups.joined(separator: "-")
    }
}

/// The SIG-assigned UUIDs the car's database uses.
public enum GATTUUIDs {
    public static let primaryService = ATTUUID(0x2800)
    public static let secondaryService = ATTUUID(0x2801)
    public static let characteristic = ATTUUID(0x2803)
    public static let clientCharacteristicConfiguration = ATTUUID(0x2902)
    public static let genericAccess = ATTUUID(0x1800)
    public static let genericAttribute = ATTUUID(0x1801)
    public static let deviceName = ATTUUID(0x2A00)
    public static let appearance = ATTUUID(0x2A01)
    public static let serviceChanged = ATTUUID(0x2A05)
}

/// The car key service (docs/protocol.md section 16, Bluetooth LE transport). The tail
/// 0c4b-4f70-656e-4361724b6579 is shared by all three.
public enum KeyServiceUUIDs {
    public static let service = ATTUUID(string: "c0de0001-0c4b-4f70-656e-4361724b6579")!
    /// Written by the phone (Write Request or Write Command); each value is one fragment.
    public static let phoneToCar = ATTUUID(string: "c0de0002-0c4b-4f70-656e-4361724b6579")!
    /// Notified or indicated by the car; each value is one fragment.
    public static let carToPhone = ATTUUID(string: "c0de0003-0c4b-4f70-656e-4361724b6579")!
}

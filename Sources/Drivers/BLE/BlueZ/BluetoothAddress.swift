// A Bluetooth device address and its LE address type. The kernel's bdaddr_t stores the six
// bytes least significant first, so the printed "AA:BB:CC:DD:EE:FF" is bytes[5]...bytes[0].

/// Six address bytes in bdaddr_t (little-endian) order.
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// bytes[0] is the least significant byte (the last pair when printed).
    public let bytes: [UInt8]

    /// 00:00:00:00:00:00: bind to "any adapter".
    public static let any = BluetoothAddress(littleEndian: [0, 0, 0, 0, 0, 0])!

    /// From six bytes in bdaddr_t order; nil unless exactly six.
    public init?(littleEndian bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// Parses "AA:BB:CC:DD:EE:FF" (hex, either case); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var parsed = [UInt8]()
        for part in parts {
            guard part.count == 2, let value = UInt8(part, radix: 16) else { return nil }
            parsed.append(value)
        }
        bytes = parsed.reversed()
    }

    public var description: String {
        bytes.reversed().map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return byte < 0x10 ? "0" + digits : digits
        }.joined(separator: ":")
    }
}

/// The address type mgmt and sockaddr_l2 use (BDADDR_BREDR 0, BDADDR_LE_PUBLIC 1, BDADDR_LE_RANDOM 2).
public enum BluetoothAddressType: UInt8, Sendable, Hashable, CustomStringConvertible {
    case bredr = 0
    case lePublic = 1
    case leRandom = 2

    public var description: String {
        switch self {
        case .bredr: return "BR/EDR"
        case .lePublic: return "LE public"
        case .leRandom: return "LE random"
        }
    }
}

// The car's name inside the signed Challenge, so a phone can tell which car it is talking to.

/// 1 to 32 printable ASCII characters (0x20...0x7E): fits a VIN (17) or a fleet ID, and is
/// safe to print in logs and diagnostics.
public struct VehicleID: Hashable, Sendable, CustomStringConvertible {
    public static let maxLength = 32
    public let bytes: Bytes

    public init(_ string: String) throws(MessageFormatError) {
        try self.init(bytes: Array(string.utf8))
    }

    public init(bytes: Bytes) throws(MessageFormatError) {
        guard (1...VehicleID.maxLength).contains(bytes.count) else {
            throw .invalidField(field: "vehicleID", reason: "length must be 1...\(VehicleID.maxLength), got \(bytes.count)")
        }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .invalidField(field: "vehicleID", reason: "must be printable ASCII")
        }
        self.bytes = bytes
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }
    public var description: String { string }
}

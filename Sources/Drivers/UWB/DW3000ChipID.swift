// DEV_ID values of the parts this driver runs (shared/reference/dw3000.md, "DEV_ID values").
// An all-ones or all-zeros read means nothing drove MISO: no chip, or wiring.

public enum DW3000ChipID: UInt32, Sendable, CaseIterable, CustomStringConvertible {
    case dw3110 = 0xDECA_0302
    case dw3120 = 0xDECA_0312
    case dw3110D0 = 0xDECA_0303
    case dw3120D0 = 0xDECA_0313
    case qm33110 = 0xDECA_0304
    case qm33120 = 0xDECA_0314

    public var description: String {
        switch self {
        case .dw3110: return "DW3110 (C0)"
        case .dw3120: return "DW3120 (C0, PDoA)"
        case .dw3110D0: return "DW3110 (D0)"
        case .dw3120D0: return "DW3120 (D0, PDoA)"
        case .qm33110: return "QM33110 (E0)"
        case .qm33120: return "QM33120 (E0, PDoA)"
        }
    }

    /// Classifies a DEV_ID read.
    public static func identify(_ value: UInt32) throws(DW3000Error) -> DW3000ChipID {
        if value == 0xFFFF_FFFF || value == 0 { throw .noChipAnswering(read: value) }
        guard let id = DW3000ChipID(rawValue: value) else { throw .unknownDevice(id: value) }
        return id
    }
}

// The car's GATT database. The layout is fixed (docs/protocol.md section 16):
//
//   0x0001  Primary Service        0x1800 Generic Access
//   0x0002  Characteristic decl.   read, -> 0x0003, 0x2A00
//   0x0003  Device Name            read (UTF-8 name)
//   0x0004  Characteristic decl.   read, -> 0x0005, 0x2A01
//   0x0005  Appearance             read (UInt16 LE)
//   0x0006  Primary Service        0x1801 Generic Attribute
//   0x0007  Characteristic decl.   indicate, -> 0x0008, 0x2A05
//   0x0008  Service Changed        (never indicated: the table is static)
//   0x0009  CCCD                   0x2902
//   0x000A  Primary Service        c0de0001-0c4b-4f70-656e-4361724b6579 (key service)
//   0x000B  Characteristic decl.   write + write without response, -> 0x000C, c0de0002-...
//   0x000C  Phone-to-car value     each write is one fragment
//   0x000D  Characteristic decl.   notify + indicate, -> 0x000E, c0de0003-...
//   0x000E  Car-to-phone value     each notification/indication is one fragment
//   0x000F  CCCD                   0x2902
//
// No attribute needs encryption or pairing at the link layer: the key protocol authenticates
// and encrypts its own messages.
import Protocol

extension GATTDatabase {
    public enum CarHandles {
        public static let deviceName: UInt16 = 0x0003
        public static let appearance: UInt16 = 0x0005
        public static let serviceChanged: UInt16 = 0x0008
        public static let serviceChangedCCCD: UInt16 = 0x0009
        public static let keyService: UInt16 = 0x000A
        public static let phoneToCar: UInt16 = 0x000C
        public static let carToPhone: UInt16 = 0x000E
        public static let carToPhoneCCCD: UInt16 = 0x000F
    }

    /// Longest Device Name kept (the GAP limit is 248 bytes).
    public static let maxDeviceNameLength = 248

    /// The car's database. `appearance` 0x0000 is "Unknown"; the name is cut to 248 bytes.
    public static func car(deviceName: String = "OpenCarKey", appearance: UInt16 = 0x0000) -> GATTDatabase {
        GATTDatabase(services: [
            GATTServiceDescription(uuid: GATTUUIDs.genericAccess, characteristics: [
                GATTCharacteristicDescription(uuid: GATTUUIDs.deviceName, properties: .read,
                                              value: Array(Array(deviceName.utf8).prefix(maxDeviceNameLength))),
                GATTCharacteristicDescription(uuid: GATTUUIDs.appearance, properties: .read,
                                              value: ATTPDU.le16(appearance)),
            ]),
            GATTServiceDescription(uuid: GATTUUIDs.genericAttribute, characteristics: [
                // Affected range 0x0001-0xFFFF, the value an indication would carry.
                GATTCharacteristicDescription(uuid: GATTUUIDs.serviceChanged, properties: .indicate,
                                              value: [0x01, 0x00, 0xFF, 0xFF]),
            ]),
            GATTServiceDescription(uuid: KeyServiceUUIDs.service, characteristics: [
                GATTCharacteristicDescription(uuid: KeyServiceUUIDs.phoneToCar, properties: [.write, .writeWithoutResponse]),
                GATTCharacteristicDescription(uuid: KeyServiceUUIDs.carToPhone, properties: [.notify, .indicate]),
            ]),
        ])
    }
}

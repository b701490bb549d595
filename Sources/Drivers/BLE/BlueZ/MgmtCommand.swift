// Encoding of the management commands this gateway sends. A packet is a 6-byte header
// (opcode, controller index, parameter length: each UInt16 little-endian) and the parameters.

public struct MgmtCommand: Equatable, Sendable, CustomStringConvertible {
    public let opcode: MgmtOpcode
    public let controllerIndex: UInt16
    public let parameters: [UInt8]

    public init(_ opcode: MgmtOpcode, index: UInt16, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.controllerIndex = index
        self.parameters = parameters
    }

    /// The bytes written to the control socket.
    public var encoded: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(6 + parameters.count)
        out.appendLE(opcode.rawValue)
        out.appendLE(controllerIndex)
        out.appendLE(UInt16(parameters.count))
        return out + parameters
    }

    public var description: String { "\(opcode) on index \(controllerIndex)" }

    // MARK: Commands

    public static func readControllerIndexList() -> MgmtCommand {
        MgmtCommand(.readControllerIndexList, index: mgmtNoControllerIndex)
    }

    public static func readControllerInfo(index: UInt16) -> MgmtCommand {
        MgmtCommand(.readControllerInfo, index: index)
    }

    public static func setPowered(_ on: Bool, index: UInt16) -> MgmtCommand {
        MgmtCommand(.setPowered, index: index, parameters: [on ? 1 : 0])
    }

    public static func setConnectable(_ on: Bool, index: UInt16) -> MgmtCommand {
        MgmtCommand(.setConnectable, index: index, parameters: [on ? 1 : 0])
    }

    public static func setBondable(_ on: Bool, index: UInt16) -> MgmtCommand {
        MgmtCommand(.setBondable, index: index, parameters: [on ? 1 : 0])
    }

    public static func setLowEnergy(_ on: Bool, index: UInt16) -> MgmtCommand {
        MgmtCommand(.setLowEnergy, index: index, parameters: [on ? 1 : 0])
    }

    /// The old single-set advertising switch. While it is on the kernel ignores Add Advertising
    /// instances, so bring-up turns it off if someone (btmgmt advertising on) left it on.
    public static func setAdvertising(_ on: Bool, index: UInt16) -> MgmtCommand {
        MgmtCommand(.setAdvertising, index: index, parameters: [on ? 1 : 0])
    }

    /// BR/EDR can only be switched off while the controller is powered off.
    public static func setBREDR(_ on: Bool, index: UInt16) -> MgmtCommand {
        MgmtCommand(.setBREDR, index: index, parameters: [on ? 1 : 0])
    }

    /// Name: at most 248 UTF-8 bytes; short name at most 10. Both are sent NUL-padded in fixed
    /// fields of 249 and 11 bytes.
    public static func setLocalName(_ name: String, shortName: String = "", index: UInt16) throws(MgmtError) -> MgmtCommand {
        let full = Array(name.utf8), short = Array(shortName.utf8)
        guard full.count <= 248 else { throw .invalidParameter("local name is \(full.count) bytes, at most 248") }
        guard short.count <= 10 else { throw .invalidParameter("short name is \(short.count) bytes, at most 10") }
        guard !full.contains(0), !short.contains(0) else { throw .invalidParameter("name contains NUL") }
        let parameters = full + [UInt8](repeating: 0, count: 249 - full.count)
            + short + [UInt8](repeating: 0, count: 11 - short.count)
        return MgmtCommand(.setLocalName, index: index, parameters: parameters)
    }

    /// Privacy 1 with the identity resolving key (16 bytes); the kernel accepts it only while
    /// the controller is powered off.
    public static func setPrivacy(_ on: Bool, identityResolvingKey: [UInt8], index: UInt16) throws(MgmtError) -> MgmtCommand {
        guard identityResolvingKey.count == 16 else {
            throw .invalidParameter("IRK is \(identityResolvingKey.count) bytes, must be 16")
        }
        return MgmtCommand(.setPrivacy, index: index, parameters: [on ? 1 : 0] + identityResolvingKey)
    }

    /// Adding an instance that exists replaces its data. Duration and timeout 0 mean "default
    /// rotation slot" and "forever".
    public static func addAdvertising(instance: UInt8, flags: MgmtAdvertisingFlags, advertisingData: [UInt8],
                                      scanResponse: [UInt8] = [], duration: UInt16 = 0, timeout: UInt16 = 0,
                                      index: UInt16) throws(MgmtError) -> MgmtCommand {
        guard instance >= 1 else { throw .invalidParameter("advertising instance 0 is reserved") }
        guard advertisingData.count <= 255, scanResponse.count <= 255 else {
            throw .invalidParameter("advertising data longer than 255 bytes")
        }
        var p = [instance]
        p.appendLE(flags.rawValue)
        p.appendLE(duration)
        p.appendLE(timeout)
        p.append(UInt8(advertisingData.count))
        p.append(UInt8(scanResponse.count))
        return MgmtCommand(.addAdvertising, index: index, parameters: p + advertisingData + scanResponse)
    }

    /// Instance 0 removes every instance.
    public static func removeAdvertising(instance: UInt8, index: UInt16) -> MgmtCommand {
        MgmtCommand(.removeAdvertising, index: index, parameters: [instance])
    }

    public static func getConnectionInfo(address: BluetoothAddress, type: BluetoothAddressType, index: UInt16) -> MgmtCommand {
        MgmtCommand(.getConnectionInfo, index: index, parameters: address.bytes + [type.rawValue])
    }

    /// Ends the connection to a peer: the kernel sends HCI Disconnect with reason 0x13 (remote
    /// user terminated) and answers with Command Complete (address and type back) only once the
    /// controller reports the link down.
    public static func disconnect(address: BluetoothAddress, type: BluetoothAddressType, index: UInt16) -> MgmtCommand {
        MgmtCommand(.disconnect, index: index, parameters: address.bytes + [type.rawValue])
    }

    public static func startDiscovery(addressTypes: UInt8 = mgmtDiscoveryLowEnergy, index: UInt16) -> MgmtCommand {
        MgmtCommand(.startDiscovery, index: index, parameters: [addressTypes])
    }

    public static func stopDiscovery(addressTypes: UInt8 = mgmtDiscoveryLowEnergy, index: UInt16) -> MgmtCommand {
        MgmtCommand(.stopDiscovery, index: index, parameters: [addressTypes])
    }
}

// What the agent needs to range with one phone: who it is, what it may do, and the secrets of
// the ranging session it set up. Made only by the engine, from an authenticated command.

public struct RangingGrant: Sendable, Equatable, CustomStringConvertible {
    public let link: LinkID
    public let keyID: KeyID
    /// The key as checked for the rangingSetup command (role, permissions, validity): the
    /// proximity policy needs to know whether this key may unlock at all.
    public let record: KeyRecord
    public let setup: RangingSetup
    /// STS key, IV base and frame key; the car runs `DSTWRResponder(material:)` with it.
    public let material: RangingMaterial

    public var description: String { "ranging grant for \(keyID) on \(link): \(setup)" }
}

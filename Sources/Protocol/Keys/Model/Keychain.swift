// The car's keys as a pure value: bounded slots, owner and shared keys, kept revocations and
// last-use times. Every operation validates first and changes nothing when it throws; what it
// did change comes back as `KeychainChange`s for the agent to persist (sealed) in one
// transaction. The engine reads it through `KeyDirectory`.

public struct Keychain: KeyDirectory, Equatable {
    public static let defaultCapacity = 32
    /// Revocations are kept for good (only owners can add them); this bound only guards memory.
    public static let maxRevocations = 65_536

    /// Key slots: unrevoked keys, owner and shared together. Revoked keys keep no slot.
    public let capacity: Int
    private var records: [KeyID: KeyRecord] = [:]
    private var activities: [KeyID: KeyActivity] = [:]
    private var revocations: [RevocationTarget: RevocationEntry] = [:]

    public init(capacity: Int = Keychain.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// Rebuilds the keychain from stored records at start-up. Stored state wins over the
    /// capacity (a lowered capacity only stops new keys), and every stored revocation is
    /// applied again, so a key can never come back from the dead.
    public init(capacity: Int = Keychain.defaultCapacity, records: [KeyRecord], activities: [KeyActivity] = [],
                revocations: [RevocationEntry] = []) {
        self.init(capacity: capacity)
        for record in records { self.records[record.keyID] = record }
        for activity in activities where self.records[activity.keyID] != nil { self.activities[activity.keyID] = activity }
        for entry in revocations {
            self.revocations[entry.target] = entry
            for keyID in affectedKeys(by: entry.target) { self.records[keyID]?.revoked = true }
        }
    }

    // MARK: Reading

    public func lookup(_ keyID: KeyID) -> KeyRecord? { records[keyID] }

    public var activeKeyCount: Int { records.values.filter { !$0.revoked }.count }
    public var ownerCount: Int { records.values.filter { !$0.revoked && $0.role == .owner }.count }
    public var hasFreeSlot: Bool { activeKeyCount < capacity }
    public var revocationCount: Int { revocations.count }

    public func isRevoked(_ target: RevocationTarget) -> Bool { revocations[target] != nil }

    public func activity(of keyID: KeyID) -> KeyActivity? { activities[keyID] }

    /// Every key, revoked ones included: owners first, then by key ID.
    public var listing: [KeyListing] {
        records.values
            .sorted { a, b in
                a.role != b.role ? a.role.rawValue < b.role.rawValue : a.keyID.bytes.lexicographicallyPrecedes(b.keyID.bytes)
            }
            .map { KeyListing(record: $0, activity: activities[$0.keyID]) }
    }

    public var revocationEntries: [RevocationEntry] {
        revocations.values.sorted { $0.target.storageID.lexicographicallyPrecedes($1.target.storageID) }
    }

    // MARK: Changing

    /// Adds an owner key proven by the pairing window (only the engine makes an
    /// `EnrollmentRequest`, so the pairing code is the only way to a new owner).
    /// - A revoked key stays revoked: `revoked`.
    /// - An owner key already present: nothing changes.
    /// - A shared key becomes an owner key in its own slot.
    /// - Otherwise a free slot is needed: `keychainFull`.
    public mutating func enroll(_ request: EnrollmentRequest, now: ProtocolTime) throws(FaultCode) -> [KeychainChange] {
        let keyID = request.keyID
        if isRevoked(.key(keyID)) || records[keyID]?.revoked == true { throw .revoked }
        if let existing = records[keyID], existing.role == .owner { return [] }
        if records[keyID] == nil, !hasFreeSlot { throw .keychainFull }
        let record = KeyRecord(publicKey: request.publicKey, role: .owner, permissions: .all)
        records[keyID] = record
        let activity = activities[keyID] ?? KeyActivity(keyID: keyID, enrolledAt: now)
        activities[keyID] = activity
        return [.putKey(record), .putActivity(activity)]
    }

    /// Remembers the key of a share certificate once its holder proved possession (the
    /// engine's `AccessGrant`). A key the car already knows is left as it is.
    public mutating func install(_ grant: AccessGrant, now: ProtocolTime) throws(FaultCode) -> [KeychainChange] {
        guard let certificate = grant.presentedCertificate, let provenance = grant.record.share,
              grant.record.role == .shared, grant.record.keyID == grant.keyID else { throw .invalidCertificate }
        if records[grant.keyID] != nil { return [] }
        if isRevoked(.key(grant.keyID)) || isRevoked(.serial(provenance.serial)) { throw .revoked }
        // The issuer may have been revoked since the Hello.
        guard let issuer = records[provenance.issuer], issuer.role == .owner else { throw .invalidCertificate }
        if issuer.revoked { throw .revoked }
        guard hasFreeSlot else { throw .keychainFull }
        var record = grant.record
        record.revoked = false
        records[grant.keyID] = record
        let activity = KeyActivity(keyID: grant.keyID, enrolledAt: now)
        activities[grant.keyID] = activity
        return [.putKey(record), .putShare(provenance.serial, certificate: certificate), .putActivity(activity)]
    }

    /// Notes an established session (the agent calls it on `.authenticated`).
    public mutating func recordUse(of keyID: KeyID, now: ProtocolTime) -> [KeychainChange] {
        guard records[keyID] != nil else { return [] }
        var activity = activities[keyID] ?? KeyActivity(keyID: keyID, enrolledAt: 0, enrolledAtTrusted: false)
        activity.recordUse(at: now)
        activities[keyID] = activity
        return [.putActivity(activity)]
    }

    /// Applies a verified revocation:
    /// - by key ID: that key; if it is an owner key, also every shared key it issued (a stolen
    ///   owner phone's shares die with it);
    /// - by serial: every key installed from that share.
    /// The revocation is kept even when no key matches yet, so the share or key can never be
    /// installed later. Refuses with `lastOwnerKey` when no unrevoked owner key would remain,
    /// and with `invalidRevocation` when the issuer is no longer an unrevoked owner.
    public mutating func apply(_ verified: VerifiedRevocation, now: ProtocolTime) throws(FaultCode) -> RevocationOutcome {
        guard let issuer = records[verified.issuer], issuer.role == .owner, !issuer.revoked else { throw .invalidRevocation }
        let target = verified.target
        let affected = affectedKeys(by: target).filter { records[$0]?.revoked == false }
        let ownersLost = affected.filter { records[$0]?.role == .owner }.count
        if ownersLost > 0, ownerCount - ownersLost < 1 { throw .lastOwnerKey }
        if revocations[target] == nil, revocations.count >= Keychain.maxRevocations { throw .keychainFull }

        var changes: [KeychainChange] = []
        if revocations[target] == nil {
            let entry = RevocationEntry(verified, appliedAt: now)
            revocations[target] = entry
            changes.append(.putRevocation(entry))
        }
        for keyID in affected {
            records[keyID]?.revoked = true
            if let record = records[keyID] { changes.append(.putKey(record)) }
        }
        return RevocationOutcome(changes: changes, revokedKeys: affected)
    }

    /// Keys a target names, sorted by key ID (deterministic output).
    private func affectedKeys(by target: RevocationTarget) -> [KeyID] {
        let matches: [KeyID]
        switch target {
        case .key(let keyID):
            guard let record = records[keyID] else { return [] }
            let issued = record.role == .owner ? records.values.filter { $0.share?.issuer == keyID }.map(\.keyID) : []
            matches = [keyID] + issued
        case .serial(let serial):
            matches = records.values.filter { $0.share?.serial == serial }.map(\.keyID)
        }
        return matches.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
    }
}

// Keys and remote payloads: share certificates, revocations, stored key records (the sealed
// store payloads), and the signed documents the cloud sends over MQTT.
import Protocol

enum KeyTargets {
    static let all: [FuzzTarget] = [
        target("share-certificate", ShareCertificate.maxLength, ShareCertificate.decode, { $0.encoded() }),
        target("revocation", Revocation.maxLength, Revocation.decode, { $0.encoded() }),
        target("stored-key-record", StoredRecordFormat.maxLength, KeyRecord.init(storedBytes:), { $0.storedBytes() }),
        target("stored-key-activity", StoredRecordFormat.maxLength, KeyActivity.init(storedBytes:), { $0.storedBytes() }),
        target("stored-revocation", StoredRecordFormat.maxLength, RevocationEntry.init(storedBytes:), { $0.storedBytes() }),
        target("remote-command", RemoteCommand.maxLength, RemoteCommand.decode, { $0.encoded() }),
        target("signed-config", SignedConfig.maxLength, SignedConfig.decode, { $0.encoded() }),
        target("revocation-list", RevocationList.maxLength, RevocationList.decode, { $0.encoded() }),
        target("fleet-key-grant", Wire.maxMessageLength, FleetKeyGrant.decode, { $0.encoded() }),
        target("ranging-setup", RangingSetup.encodedLength, RangingSetup.decode, { $0.encoded() }),
        target("ranging-capabilities", UWBCapabilities.encodedLength, UWBCapabilities.decode, { $0.encoded() }),
        target("service-challenge", ServiceChallenge.maxLength, ServiceChallenge.decode, { $0.encoded() }),
        FuzzTarget("service-authorisation", "service-authorisation: strict round trip (<= \(ServiceAuthorisation.maxLength) bytes, canonical, trailing/truncated refused); the car's gate, waiting for a fixed challenge, accepts an answer only when it answers that challenge with a signature that verifies, and never the same answer twice") { bytes throws(PropertyViolation) in
            let accepted = try Strict.roundTrip(bytes, maxLength: ServiceAuthorisation.maxLength, decode: ServiceAuthorisation.decode, encode: { $0.encoded() })
            var gate = ServiceGateFixture.gate()
            guard let authorised = try? gate.authorise(bytes, nowMillis: 1, signers: ServiceGateFixture.signers, isRevoked: { _ in false }) else {
                return accepted
            }
            let answer = try? ServiceAuthorisation.decode(bytes)
            try require(answer?.challenge == ServiceGateFixture.challenge, "accepted an answer to another challenge")
            try require(authorised.signer.keyID == answer?.signerKeyID, "accepted for another signer")
            let signature = answer.flatMap { try? ECDSASignature(rawRepresentation: $0.signature) }
            try require(signature.map { authorised.signer.publicKey.isValidSignature($0, for: answer!.signatureInput) } ?? false,
                        "accepted a signature that does not verify")
            try require((try? gate.authorise(bytes, nowMillis: 2, signers: ServiceGateFixture.signers, isRevoked: { _ in false })) == nil,
                        "accepted the same answer twice")
            return true
        },
        FuzzTarget("sealed-record", "SealedBox(combined:) + open under a fixed store key: a box that opens re-seals to the same combined bytes; a flipped bit never opens") { input throws(PropertyViolation) in
            guard let box = try? SealedBox(combined: input) else { return false }
            try require(box.combined == input, "SealedBox combined round trip")
            guard let plaintext = try? box.open(key: StoreKey.fixed, authenticating: StoreKey.aad) else { return true }
            try require(plaintext.count + SealedBox.overhead == input.count, "plaintext length = combined - overhead")
            var forged = input
            forged[input.count / 2] ^= 0x80
            try require((try? SealedBox(combined: forged).open(key: StoreKey.fixed, authenticating: StoreKey.aad)) == nil, "tampered box refused")
            return true
        },
    ]

    static func target<T: Equatable>(_ name: String, _ limit: Int, _ decode: @escaping @Sendable (Bytes) throws -> T,
                                     _ encode: @escaping @Sendable (T) -> Bytes) -> FuzzTarget {
        FuzzTarget(name, "\(name): accepted => <= \(limit) bytes, canonical, decode(encode(x)) == x, trailing/truncated refused") { bytes throws(PropertyViolation) in
            try Strict.roundTrip(bytes, maxLength: limit, decode: decode, encode: encode)
        }
    }
}

enum StoreKey {
    static let fixed: Bytes = SHA256.hash(Array("carkey-fuzz/fixed-store-key".utf8))
    /// Same shape as the store's associated data (domain, kind, ID); fixed for the fuzzer.
    static let aad: Bytes = Array("opencarkey/sealed-record/v1".utf8) + [0, 3] + Array("key".utf8) + [8, 1, 2, 3, 4, 5, 6, 7, 8]
}

/// The service gate as the fuzzer meets it: waiting for one fixed challenge (docs/protocol.md
/// 18.13's example) from the example owner key. Seeds include the documented answer, so the
/// fuzzer starts from an accepted input.
enum ServiceGateFixture {
    static let owner = try! P256PrivateKey(rawScalar: Bytes(hex: "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721")!)
    static let vehicle = try! VehicleID("OCK-SIM-0001")
    static let challenge = try! ServiceChallenge(nonce: Bytes(0..<16), vehicleID: vehicle, issuedAt: 1_760_000_000, expiresAt: 1_760_000_300)

    struct Directory: RemoteSignerDirectory {
        func remoteSigner(_ keyID: KeyID) -> RemoteSigner? {
            keyID == KeyID(publicKey: ServiceGateFixture.owner.publicKey)
                ? RemoteSigner(keyID: keyID, publicKey: ServiceGateFixture.owner.publicKey, kind: .owner, permissions: .all) : nil
        }
    }
    static let signers = Directory()

    static func gate() -> ServiceChallengeGate {
        var gate = ServiceChallengeGate(vehicleID: vehicle)
        _ = try? gate.issue(nonce: challenge.nonce, wallSeconds: challenge.issuedAt, nowMillis: 0)
        return gate
    }
}

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

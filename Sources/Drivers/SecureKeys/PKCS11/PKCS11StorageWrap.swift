// The storage key, wrapped by a token-resident AES-256 key: the state directory holds only
// IV || AES-GCM(ciphertext || tag) of the 32 key bytes, which nothing but this token can open.
// An imaged SD card without the token is useless; the token without the card holds no record.
#if canImport(Glibc)
import Glibc
#endif
import CPKCS11
import Protocol

struct PKCS11StorageWrap {
    static let label = "opencarkey-storage-wrap"
    static let id: Bytes = Array("opencarkey:storage-wrap:1".utf8)
    static let fileName = "pkcs11-storage.key"
    /// Binds the blob to its purpose: the same wrap key used for anything else cannot produce
    /// or accept this file.
    static let aad: Bytes = Array("opencarkey pkcs11 storage key v1".utf8)
    static let keyLength = 32
    static let ivLength = 12
    static let tagBits = 128
    static var fileLength: Int { ivLength + keyLength + tagBits / 8 }

    let token: PKCS11Token
    let path: String
    let random: RandomSource

    /// The 32-byte storage key: unwrapped from the file, or made, wrapped and written on first use.
    func storageKey() throws(SecureKeyError) -> Bytes {
        if let blob = try readFile() { return try unwrap(blob) }
        var fresh: Bytes
        do { fresh = try random.randomBytes(Self.keyLength) } catch {
            throw SecureKeyError.operationFailed(operation: "random storage key", code: 0, detail: "the system random generator failed")
        }
        defer { ConstantTime.wipe(&fresh) }
        let blob = try wrap(fresh)
        do {
            // Exclusive: two processes starting at once must not each write a different key.
            try Files.writeAtomically(blob, to: path, mode: 0o600, exclusive: true)
        } catch let error as Errno where error.rawValue == EEXIST {
            // Lost the race: the winner's key is the key.
            guard let winner = try readFile() else { throw SecureKeyError.malformed(what: "\(path) (vanished while being created)") }
            return try unwrap(winner)
        } catch {
            throw SecureKeyError.operationFailed(operation: "write \(path)", code: 0, detail: "\(error)")
        }
        return fresh
    }

    private func readFile() throws(SecureKeyError) -> Bytes? {
        guard access(path, F_OK) == 0 else { return nil }
        let blob: Bytes
        do { blob = try Files.read(path, limit: 4096) } catch {
            throw SecureKeyError.operationFailed(operation: "read \(path)", code: 0, detail: "\(error)")
        }
        guard blob.count == Self.fileLength else {
            throw SecureKeyError.malformed(what: "\(path) (\(blob.count) bytes, \(Self.fileLength) expected)")
        }
        return blob
    }

    private func foreign(_ reason: String) -> SecureKeyError {
        .foreignObject(what: "\(path) (the wrapped storage key)",
            fix: "\(reason) on token \"\(token.label)\": reconnect or restore the token this state directory was made "
                + "with (its storage-wrap key), or migrate the store with that token attached; a new token cannot open "
                + "records sealed under the old key")
    }

    private func unwrap(_ blob: Bytes) throws(SecureKeyError) -> Bytes {
        let iv = Array(blob[..<Self.ivLength])
        let sealed = Array(blob[Self.ivLength...])
        return try token.serialized { (calls) throws(SecureKeyError) -> Bytes in
            let keys = try calls.find(Self.template)
            guard !keys.isEmpty else { throw foreign("no storage-wrap key labelled \(Self.label)") }
            // Two processes racing on a first start may each have made a wrap key: whichever
            // opens the file is the one.
            var lastFailure: CK_RV = CKR_OK
            for key in keys {
                var (rv, plain) = try calls.aesGCM(encrypt: false, key: key, iv: iv, aad: Self.aad, tagBits: Self.tagBits, input: sealed)
                if rv == CKR_OK, plain.count == Self.keyLength { return plain }
                ConstantTime.wipe(&plain)
                if PKCS11ReturnValue.isDeviceFailure(rv) { throw PKCS11ReturnValue.failure(rv, "C_Decrypt (storage key)") }
                lastFailure = rv
            }
            throw foreign("it does not decrypt with the storage-wrap key (\(PKCS11ReturnValue.name(lastFailure)))")
        }
    }

    private func wrap(_ key: Bytes) throws(SecureKeyError) -> Bytes {
        let iv: Bytes
        do { iv = try random.randomBytes(Self.ivLength) } catch {
            throw SecureKeyError.operationFailed(operation: "random IV", code: 0, detail: "the system random generator failed")
        }
        return try token.serialized { (calls) throws(SecureKeyError) -> Bytes in
            let wrapKey: CK_OBJECT_HANDLE
            if let existing = try calls.find(Self.template).first {
                wrapKey = existing
            } else {
                // Sensitive and never extractable: the key cannot leave the token, even wrapped.
                wrapKey = try calls.generateKey(mechanism: CKM_AES_KEY_GEN, template: Self.template + [
                    .ulong(CKA_VALUE_LEN, UInt(32)), .bool(CKA_TOKEN, true), .bool(CKA_PRIVATE, true),
                    .bool(CKA_SENSITIVE, true), .bool(CKA_EXTRACTABLE, false), .bool(CKA_ENCRYPT, true), .bool(CKA_DECRYPT, true),
                ])
            }
            let (rv, sealed) = try calls.aesGCM(encrypt: true, key: wrapKey, iv: iv, aad: Self.aad, tagBits: Self.tagBits, input: key)
            try PKCS11ReturnValue.check(rv, "C_Encrypt (storage key)")
            guard sealed.count == Self.keyLength + Self.tagBits / 8 else {
                throw SecureKeyError.malformed(what: "AES-GCM output from token \"\(token.label)\" (\(sealed.count) bytes)")
            }
            return iv + sealed
        }
    }

    private static var template: [PKCS11Attribute] {
        [.ulong(CKA_CLASS, CKO_SECRET_KEY), .ulong(CKA_KEY_TYPE, CKK_AES), .bytes(CKA_LABEL, Array(label.utf8)), .bytes(CKA_ID, id)]
    }
}

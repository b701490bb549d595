// A TPM object kept outside the TPM: its public area and its private blob (the sensitive area,
// encrypted and integrity-protected under the parent) in two files of the state directory,
// marshalled in the TPM's own wire format. Without the board's TPM the private blob is useless;
// copying the files to another board gives objects that the other TPM refuses to load.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

/// An object's two blobs as the files hold them: TPM2B_PUBLIC and TPM2B_PRIVATE in the TPM's
/// wire format (what Tss2_MU_TPM2B_PUBLIC/PRIVATE_Marshal wrote for earlier versions, byte
/// for byte), and the public area parsed.
struct TPM2Blobs {
    var `public`: Bytes
    var `private`: Bytes
    var publicArea: TPM2PublicArea
}

struct TPM2BlobFiles {
    let directory: String
    /// "tpm2-identity" or "tpm2-storage".
    let name: String

    var publicPath: String { directory + "/" + name + ".pub" }
    var privatePath: String { directory + "/" + name + ".priv" }

    /// The stored object, or nil when neither file exists. One file without the other is
    /// refused rather than recreated: it can mean a lost half of a live object.
    func read() throws(SecureKeyError) -> TPM2Blobs? {
        let publicBytes = try readFile(publicPath)
        let privateBytes = try readFile(privatePath)
        switch (publicBytes, privateBytes) {
        case (nil, nil): return nil
        case (.some, nil): throw .malformed(what: "\(name) blobs: \(privatePath) is missing but \(publicPath) is there")
        case (nil, .some): throw .malformed(what: "\(name) blobs: \(publicPath) is missing but \(privatePath) is there")
        case (.some(let publicBytes), .some(let privateBytes)):
            // Trailing bytes are refused: a blob with an appendix was not written by us.
            guard let publicArea = try? TPM2PublicArea.parseSized(publicBytes) else {
                throw .malformed(what: "\(publicPath) (not a marshalled TPM2B_PUBLIC)")
            }
            var reader = TPM2Reader(privateBytes)
            guard (try? reader.sized("TPM2B_PRIVATE", limit: TPM2Limits.maxMessage)) != nil, (try? reader.finish()) != nil else {
                throw .malformed(what: "\(privatePath) (not a marshalled TPM2B_PRIVATE)")
            }
            return TPM2Blobs(public: publicBytes, private: privateBytes, publicArea: publicArea)
        }
    }

    /// Writes both files (0600, each atomically: fsynced and renamed). The private blob goes
    /// first, so a reader never finds a public area whose private half was never written.
    func write(_ blobs: TPM2Blobs) throws(SecureKeyError) {
        for (bytes, path) in [(blobs.private, privatePath), (blobs.public, publicPath)] {
            do {
                try Files.writeAtomically(bytes, to: path, mode: 0o600)
            } catch {
                throw .operationFailed(operation: "write \(path)", code: UInt64(errnoCode(error)), detail: "\(error)")
            }
        }
    }

    private func readFile(_ path: String) throws(SecureKeyError) -> Bytes? {
        do {
            return try Files.read(path, limit: 4096)
        } catch let error as Errno where error.rawValue == ENOENT {
            return nil
        } catch {
            throw .malformed(what: "\(path) (\(error))")
        }
    }

    private func errnoCode(_ error: any Error) -> Int32 {
        (error as? Errno)?.rawValue ?? 0
    }
}

// A TPM object kept outside the TPM: its public area and its private blob (the sensitive area,
// encrypted and integrity-protected under the parent) in two files of the state directory,
// marshalled in the TPM's own wire format. Without the board's TPM the private blob is useless;
// copying the files to another board gives objects that the other TPM refuses to load.
#if canImport(Glibc)
import Glibc
#endif
import CTSS2
import Protocol

struct TPM2BlobFiles {
    let directory: String
    /// "tpm2-identity" or "tpm2-storage".
    let name: String

    var publicPath: String { directory + "/" + name + ".pub" }
    var privatePath: String { directory + "/" + name + ".priv" }

    /// The stored object, or nil when neither file exists. One file without the other is
    /// refused rather than recreated: it can mean a lost half of a live object.
    func read(_ library: TPM2Library) throws(SecureKeyError) -> (public: TPM2B_PUBLIC, private: TPM2B_PRIVATE)? {
        let publicBytes = try readFile(publicPath)
        let privateBytes = try readFile(privatePath)
        switch (publicBytes, privateBytes) {
        case (nil, nil): return nil
        case (.some, nil): throw .malformed(what: "\(name) blobs: \(privatePath) is missing but \(publicPath) is there")
        case (nil, .some): throw .malformed(what: "\(name) blobs: \(publicPath) is missing but \(privatePath) is there")
        case (.some(let publicBytes), .some(let privateBytes)):
            var publicArea = TPM2B_PUBLIC()
            var privateArea = TPM2B_PRIVATE()
            guard unmarshal(publicBytes, { library.unmarshalPublic($0, $1, $2, &publicArea) }) else {
                throw .malformed(what: "\(publicPath) (not a marshalled TPM2B_PUBLIC)")
            }
            guard unmarshal(privateBytes, { library.unmarshalPrivate($0, $1, $2, &privateArea) }) else {
                throw .malformed(what: "\(privatePath) (not a marshalled TPM2B_PRIVATE)")
            }
            return (publicArea, privateArea)
        }
    }

    /// Writes both files (0600, each atomically: fsynced and renamed). The private blob goes
    /// first, so a reader never finds a public area whose private half was never written.
    func write(_ library: TPM2Library, public publicArea: TPM2B_PUBLIC, private privateArea: TPM2B_PRIVATE) throws(SecureKeyError) {
        var publicArea = publicArea
        var privateArea = privateArea
        let publicBytes = try marshal(publicPath) { library.marshalPublic(&publicArea, $0, $1, $2) }
        let privateBytes = try marshal(privatePath) { library.marshalPrivate(&privateArea, $0, $1, $2) }
        for (bytes, path) in [(privateBytes, privatePath), (publicBytes, publicPath)] {
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

    /// Unmarshals all of `bytes`; trailing bytes are refused (a blob with an appendix was not
    /// written by us).
    private func unmarshal(_ bytes: Bytes, _ body: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>) -> TSS2_RC) -> Bool {
        var offset = 0
        let code = bytes.withUnsafeBufferPointer { body($0.baseAddress, $0.count, &offset) }
        return code == TSS2_RC_SUCCESS && offset == bytes.count
    }

    private func marshal(_ path: String, _ body: (UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>) -> TSS2_RC) throws(SecureKeyError) -> Bytes {
        var buffer = Bytes(repeating: 0, count: 4096)
        var offset = 0
        let code = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress, $0.count, &offset) }
        guard code == TSS2_RC_SUCCESS else {
            throw .operationFailed(operation: "marshal \(path)", code: UInt64(code), detail: "TPM2B structure did not marshal")
        }
        return Bytes(buffer.prefix(offset))
    }

    private func errnoCode(_ error: any Error) -> Int32 {
        (error as? Errno)?.rawValue ?? 0
    }
}

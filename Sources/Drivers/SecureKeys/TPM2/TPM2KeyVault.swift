// The TPM 2.0 key vault: the storage key sealed by the TPM, the identity key
// generated in it. The state directory keeps only TPM blobs (tpm2-identity.*, tpm2-storage.*),
// which load on this board's TPM and nowhere else: an imaged SD card yields neither key.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

public final class TPM2KeyVault: CarKeyVault, @unchecked Sendable {
    // @unchecked Sendable: `identity` is guarded by `stateLock`; TPM access by the device's lock.
    public static let defaultTCTI = "device:/dev/tpmrm0"

    /// Whether `tcti` names a transport this client speaks (device:PATH, swtpm:host=IP,port=P).
    public static func isSupportedTCTI(_ tcti: String) -> Bool {
        if case .success = TPM2TCTI.parse(tcti) { return true }
        return false
    }

    public let kind = "tpm2"
    public let tcti: String
    public let stateDirectory: String
    /// The PCRs (SHA-256 bank) the storage key is bound to; empty when unbound.
    public var pcrs: [Int] { binding.indexes }

    private let device: TPM2Device
    private let binding: TPM2PCRBinding
    private let manufacturer: String?
    private let stateLock = Lock()
    private var identity: TPM2Identity?
    /// Objects made without noDA: tests only (what cars set up by older versions hold).
    private let makeDAProtected: Bool
    /// Loaded objects that lack noDA ("identity", "storage key"): older cars' objects, which
    /// count towards the TPM's dictionary-attack lockout at every unclean power cut.
    private var daProtectedObjects: Set<String> = []

    var identityFiles: TPM2BlobFiles { TPM2BlobFiles(directory: stateDirectory, name: "tpm2-identity") }
    var storageFiles: TPM2BlobFiles { TPM2BlobFiles(directory: stateDirectory, name: "tpm2-storage") }

    /// Connects to the TPM through `tcti` and derives the storage primary (the same key at
    /// every open on the same TPM). Throws deviceMissing when the TPM is not there or the tcti
    /// setting names a transport this client does not speak.
    public convenience init(tcti: String = TPM2KeyVault.defaultTCTI, stateDirectory: String, pcrs: [Int] = []) throws(SecureKeyError) {
        try self.init(tcti: tcti, stateDirectory: stateDirectory, pcrs: pcrs, makeDAProtected: false)
    }

    init(tcti: String, stateDirectory: String, pcrs: [Int], makeDAProtected: Bool,
         opening: TPM2Opener? = nil) throws(SecureKeyError) {
        self.makeDAProtected = makeDAProtected
        self.tcti = tcti
        self.stateDirectory = stateDirectory
        binding = try TPM2PCRBinding(pcrs)
        let device = try TPM2Device(tcti: tcti, opening: opening)
        self.device = device
        manufacturer = try device.withContext { client throws(SecureKeyError) in
            device.primary = try device.createPrimary(client)
            return device.manufacturer(client)
        }
    }

    deinit { close() }

    /// Flushes the transient objects, tells the TPM an orderly shutdown is next
    /// (TPM2_Shutdown(CLEAR): a power cut after a clean stop then counts as orderly) and ends
    /// the connection. Identity keys handed out stop working (their calls throw deviceMissing).
    public func close() {
        stateLock.withLock {
            identity = nil
            device.close { client in
                device.flush(client, device.identity?.handle)
                device.flush(client, device.primary?.handle)
                device.identity = nil
                device.shutdown(client)
            }
        }
    }

    public var summary: String {
        let maker = manufacturer.map { "manufacturer \($0), " } ?? ""
        let bound = binding.isBound ? ", storage key bound to \(binding.description)" : ""
        let legacy = stateLock.withLock { daProtectedObjects.sorted() }
        let lockout = legacy.isEmpty ? "" : "; WARNING: the \(legacy.joined(separator: " and ")) made by an older carkey-agent lack noDA, "
            + "so power cuts while the agent runs count towards the TPM's dictionary-attack lockout (docs/operations.md, section 13)"
        return "TPM 2.0 at \(tcti) (\(maker)primary ECC P-256 under owner, identity and storage key blobs in \(stateDirectory)/tpm2-*\(bound))" + lockout
    }

    /// Called with one line when the TPM stops answering (its TCTI and the error) and one when
    /// a reconnect brings it back; never once per refused call. The agent logs them.
    public func onConnectionChange(_ report: @escaping @Sendable (String) -> Void) {
        device.setReport(report)
    }

    /// The TPM's dictionary-attack failure count (TPM2_PT_LOCKOUT_COUNTER); tests.
    func lockoutCounter() throws(SecureKeyError) -> UInt32 {
        try device.withContext { client throws(SecureKeyError) in try device.variableProperty(client, TPM2Code.propertyLockoutCounter) }
    }

    public func deviceIdentity(create: Bool) throws(SecureKeyError) -> (any ProtocolKeyAgreement)? {
        try stateLock.withLock { () throws(SecureKeyError) -> (any ProtocolKeyAgreement)? in
            if let identity { return identity }
            let files = identityFiles
            let loaded: TPM2LoadedObject? = try device.withContext { client throws(SecureKeyError) in
                guard let primary = device.primary else { throw .deviceMissing(device: device.deviceName, fix: "no primary key") }
                var blobs = try files.read()
                if blobs == nil {
                    guard create else { return nil }
                    let made = try device.create(client, parent: primary, auth: .password,
                                                 template: TPM2Templates.identity(daProtected: makeDAProtected),
                                                 data: [], what: "identity key")
                    try files.write(made)
                    blobs = made
                }
                guard let blobs else { return nil }
                guard TPM2Templates.isIdentity(blobs.publicArea) else {
                    throw .malformed(what: "\(files.publicPath) (not a fixedTPM P-256 identity key)")
                }
                let object = try device.load(client, parent: primary, blobs: blobs, files: files)
                device.identity = object
                device.identityFiles = files
                return object
            }
            guard let loaded else { return nil }
            let made: TPM2Identity
            do throws(SecureKeyError) {
                made = try TPM2Identity(device: device, publicArea: loaded.publicArea)
            } catch {
                try? device.withContext { client throws(SecureKeyError) in
                    device.flush(client, loaded.handle)
                    device.identity = nil
                    device.identityFiles = nil
                }
                throw error
            }
            identity = made
            if TPM2Templates.isDAProtected(loaded.publicArea) { daProtectedObjects.insert("identity") }
            return made
        }
    }

    /// The 32-byte storage key: unsealed from tpm2-storage.* or, on first use, made and sealed.
    public func storageKey() throws(SecureKeyError) -> Bytes {
        let files = storageFiles
        var daProtected = false
        let key = try device.withContext { client throws(SecureKeyError) in
            guard let primary = device.primary else { throw .deviceMissing(device: device.deviceName, fix: "no primary key") }
            return try device.storageKey(client, primary: primary, files: files, binding: binding,
                                  makeDAProtected: makeDAProtected, daProtected: &daProtected)
        }
        if daProtected { stateLock.withLock { _ = daProtectedObjects.insert("storage key") } }
        return key
    }

    /// Extends a SHA-256 PCR (TPM2_PCR_Extend, Part 3 §22.2; tests: what a changed boot
    /// component does to a bound key).
    func extendPCR(_ index: Int, digest: Bytes) throws(SecureKeyError) {
        precondition((0...23).contains(index) && digest.count == 32)
        var parameters = TPM2Writer()
        parameters.u32(1) // TPML_DIGEST_VALUES: one TPMT_HA
        parameters.u16(TPM2Algorithm.sha256)
        parameters.raw(digest)
        try device.withContext { client throws(SecureKeyError) in
            _ = try device.run(client, TPM2Call(code: TPM2CommandCode.pcrExtend, handles: [TPM2Handle.pcr(index)], auths: [.password],
                                                parameters: parameters.bytes), "PCR_Extend")
        }
    }
}

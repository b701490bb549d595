// tpm2-tss loaded at run time. The agent is a static executable that must start on boards with
// no TPM and no tss2 libraries, so nothing links against them: the few functions the vault uses
// are resolved here with dlsym into typed C function pointers (types from the CTSS2 headers).
#if canImport(Glibc)
import Glibc
#endif
import CTSS2

// ESYS_CONTEXT and TSS2_TCTI_CONTEXT are opaque structs: Swift sees their pointers as OpaquePointer.
typealias TctiLdrInitializeFn = @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?) -> TSS2_RC
typealias TctiLdrFinalizeFn = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
typealias EsysInitializeFn = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?, UnsafeMutablePointer<TSS2_ABI_VERSION>?) -> TSS2_RC
typealias EsysFinalizeFn = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
typealias EsysFreeFn = @convention(c) (UnsafeMutableRawPointer?) -> Void
typealias EsysFlushContextFn = @convention(c) (OpaquePointer?, ESYS_TR) -> TSS2_RC
typealias EsysCreatePrimaryFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafePointer<TPM2B_SENSITIVE_CREATE>?, UnsafePointer<TPM2B_PUBLIC>?, UnsafePointer<TPM2B_DATA>?,
    UnsafePointer<TPML_PCR_SELECTION>?, UnsafeMutablePointer<ESYS_TR>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PUBLIC>?>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_CREATION_DATA>?>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_DIGEST>?>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPMT_TK_CREATION>?>?) -> TSS2_RC
typealias EsysCreateFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafePointer<TPM2B_SENSITIVE_CREATE>?, UnsafePointer<TPM2B_PUBLIC>?, UnsafePointer<TPM2B_DATA>?,
    UnsafePointer<TPML_PCR_SELECTION>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PRIVATE>?>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PUBLIC>?>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_CREATION_DATA>?>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_DIGEST>?>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPMT_TK_CREATION>?>?) -> TSS2_RC
typealias EsysLoadFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafePointer<TPM2B_PRIVATE>?, UnsafePointer<TPM2B_PUBLIC>?, UnsafeMutablePointer<ESYS_TR>?) -> TSS2_RC
typealias EsysSignFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafePointer<TPM2B_DIGEST>?, UnsafePointer<TPMT_SIG_SCHEME>?, UnsafePointer<TPMT_TK_HASHCHECK>?,
    UnsafeMutablePointer<UnsafeMutablePointer<TPMT_SIGNATURE>?>?) -> TSS2_RC
typealias EsysECDHZGenFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafePointer<TPM2B_ECC_POINT>?, UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_ECC_POINT>?>?) -> TSS2_RC
typealias EsysUnsealFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?>?) -> TSS2_RC
typealias EsysStartAuthSessionFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafePointer<TPM2B_NONCE>?, TPM2_SE, UnsafePointer<TPMT_SYM_DEF>?, TPMI_ALG_HASH,
    UnsafeMutablePointer<ESYS_TR>?) -> TSS2_RC
typealias EsysTRSessSetAttributesFn = @convention(c) (OpaquePointer?, ESYS_TR, TPMA_SESSION, TPMA_SESSION) -> TSS2_RC
typealias EsysPolicyPCRFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafePointer<TPM2B_DIGEST>?, UnsafePointer<TPML_PCR_SELECTION>?) -> TSS2_RC
typealias EsysPolicyGetDigestFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
    UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_DIGEST>?>?) -> TSS2_RC
typealias EsysGetCapabilityFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, TPM2_CAP, UInt32, UInt32,
    UnsafeMutablePointer<TPMI_YES_NO>?, UnsafeMutablePointer<UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?>?) -> TSS2_RC
typealias EsysPCRExtendFn = @convention(c) (
    OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, UnsafePointer<TPML_DIGEST_VALUES>?) -> TSS2_RC
typealias EsysShutdownFn = @convention(c) (OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, TPM2_SU) -> TSS2_RC
typealias MUPublicMarshalFn = @convention(c) (
    UnsafePointer<TPM2B_PUBLIC>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC
typealias MUPublicUnmarshalFn = @convention(c) (
    UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<TPM2B_PUBLIC>?) -> TSS2_RC
typealias MUPrivateMarshalFn = @convention(c) (
    UnsafePointer<TPM2B_PRIVATE>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC
typealias MUPrivateUnmarshalFn = @convention(c) (
    UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<TPM2B_PRIVATE>?) -> TSS2_RC
typealias RCDecodeFn = @convention(c) (TSS2_RC) -> UnsafePointer<CChar>?

/// The resolved tss2 entry points. Loaded once per process and never unloaded (dlclose of a
/// library whose TCTI module may still be mapped buys nothing on a board).
struct TPM2Library: @unchecked Sendable {
    // @unchecked Sendable: immutable C function pointers.
    let tctiInitialize: TctiLdrInitializeFn
    let tctiFinalize: TctiLdrFinalizeFn
    let initialize: EsysInitializeFn
    let finalize: EsysFinalizeFn
    let free: EsysFreeFn
    let flushContext: EsysFlushContextFn
    let createPrimary: EsysCreatePrimaryFn
    let create: EsysCreateFn
    let load: EsysLoadFn
    let sign: EsysSignFn
    let ecdhZGen: EsysECDHZGenFn
    let unseal: EsysUnsealFn
    let startAuthSession: EsysStartAuthSessionFn
    let setSessionAttributes: EsysTRSessSetAttributesFn
    let policyPCR: EsysPolicyPCRFn
    let policyGetDigest: EsysPolicyGetDigestFn
    let getCapability: EsysGetCapabilityFn
    let pcrExtend: EsysPCRExtendFn
    let shutdown: EsysShutdownFn
    let marshalPublic: MUPublicMarshalFn
    let unmarshalPublic: MUPublicUnmarshalFn
    let marshalPrivate: MUPrivateMarshalFn
    let unmarshalPrivate: MUPrivateUnmarshalFn
    /// Optional: libtss2-rc only turns codes into text.
    let decode: RCDecodeFn?

    /// The libraries (Debian 12 sonames) and the package that ships each.
    static let esys = ("libtss2-esys.so.0", "libtss2-esys-3.0.2-0")
    static let tctiLoader = ("libtss2-tctildr.so.0", "libtss2-tctildr0")
    static let marshalling = ("libtss2-mu.so.0", "libtss2-mu0")
    static let responseCodes = "libtss2-rc.so.0"

    /// The process-wide copy: dlopen is done once, the outcome (success or the error) is kept.
    static func shared() throws(SecureKeyError) -> TPM2Library {
        try loaded.get()
    }

    private static let loaded: Result<TPM2Library, SecureKeyError> = Result { () throws(SecureKeyError) in try load() }

    private static func load() throws(SecureKeyError) -> TPM2Library {
        let esys = try open(Self.esys)
        let tcti = try open(tctiLoader)
        let mu = try open(marshalling)
        let rc = try? SharedLibrary.open(responseCodes).get()
        return TPM2Library(
            tctiInitialize: try symbol(tcti, "Tss2_TctiLdr_Initialize", tctiLoader.0),
            tctiFinalize: try symbol(tcti, "Tss2_TctiLdr_Finalize", tctiLoader.0),
            initialize: try symbol(esys, "Esys_Initialize", Self.esys.0),
            finalize: try symbol(esys, "Esys_Finalize", Self.esys.0),
            free: try symbol(esys, "Esys_Free", Self.esys.0),
            flushContext: try symbol(esys, "Esys_FlushContext", Self.esys.0),
            createPrimary: try symbol(esys, "Esys_CreatePrimary", Self.esys.0),
            create: try symbol(esys, "Esys_Create", Self.esys.0),
            load: try symbol(esys, "Esys_Load", Self.esys.0),
            sign: try symbol(esys, "Esys_Sign", Self.esys.0),
            ecdhZGen: try symbol(esys, "Esys_ECDH_ZGen", Self.esys.0),
            unseal: try symbol(esys, "Esys_Unseal", Self.esys.0),
            startAuthSession: try symbol(esys, "Esys_StartAuthSession", Self.esys.0),
            setSessionAttributes: try symbol(esys, "Esys_TRSess_SetAttributes", Self.esys.0),
            policyPCR: try symbol(esys, "Esys_PolicyPCR", Self.esys.0),
            policyGetDigest: try symbol(esys, "Esys_PolicyGetDigest", Self.esys.0),
            getCapability: try symbol(esys, "Esys_GetCapability", Self.esys.0),
            pcrExtend: try symbol(esys, "Esys_PCR_Extend", Self.esys.0),
            shutdown: try symbol(esys, "Esys_Shutdown", Self.esys.0),
            marshalPublic: try symbol(mu, "Tss2_MU_TPM2B_PUBLIC_Marshal", marshalling.0),
            unmarshalPublic: try symbol(mu, "Tss2_MU_TPM2B_PUBLIC_Unmarshal", marshalling.0),
            marshalPrivate: try symbol(mu, "Tss2_MU_TPM2B_PRIVATE_Marshal", marshalling.0),
            unmarshalPrivate: try symbol(mu, "Tss2_MU_TPM2B_PRIVATE_Unmarshal", marshalling.0),
            decode: rc.flatMap { try? symbol($0, "Tss2_RC_Decode", responseCodes) })
    }

    /// dlopens `library.0`; deviceMissing naming the package `library.1` when it is not there,
    /// or naming the glibc build when this executable is fully static.
    static func open(_ library: (String, String)) throws(SecureKeyError) -> UnsafeMutableRawPointer {
        switch SharedLibrary.open(library.0) {
        case .success(let handle):
            return handle
        case .failure(.staticExecutable):
            throw .deviceMissing(device: library.0, fix: SharedLibrary.staticExecutableFix)
        case .failure(.notLoadable):
            throw .deviceMissing(device: library.0,
                                 fix: "install the tpm2-tss runtime (apt install \(library.1)), or set the key vault to \"file\"")
        }
    }

    private static func symbol<F>(_ handle: UnsafeMutableRawPointer, _ name: String, _ library: String) throws(SecureKeyError) -> F {
        guard let address = dlsym(handle, name) else {
            throw .deviceMissing(device: library, fix: "\(name) is missing: install tpm2-tss 3.x (Debian 12: libtss2-esys-3.0.2-0, libtss2-tctildr0)")
        }
        return unsafeBitCast(address, to: F.self)
    }

    /// Text for a response code (the tss2-rc decoder when present), for error detail.
    func describe(_ code: TSS2_RC) -> String {
        guard let decode, let text = decode(code) else { return "TSS2 response code" }
        return String(cString: text)
    }
}

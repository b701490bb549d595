// Loads a PKCS#11 module at run time (dlopen + C_GetFunctionList) and initialises it once per
// process. The agent is a static executable that must start on boards without a token, so no
// PKCS#11 symbol is linked: every call goes through the module's own CK_FUNCTION_LIST.
#if canImport(Glibc)
import Glibc
#endif
import CPKCS11

/// One loaded, initialised module. Shared by every vault that names the same file: C_Initialize
/// may run only once per process per module (a second call answers
/// CKR_CRYPTOKI_ALREADY_INITIALIZED, and C_Finalize would pull the module from under the other
/// user), so `acquire` counts users and the last `release` calls C_Finalize.
final class PKCS11Module: @unchecked Sendable {
    // @unchecked Sendable: `functions` is the module's own table, read-only after
    // C_GetFunctionList; the module is initialised with CKF_OS_LOCKING_OK so it locks itself.
    let path: String
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    /// False when something else in the process had already initialised the module: then it
    /// is that code's to finalize, not ours.
    fileprivate let finalizeOnLastRelease: Bool
    fileprivate var users = 0

    private init(path: String, functions: UnsafeMutablePointer<CK_FUNCTION_LIST>, finalizeOnLastRelease: Bool) {
        self.path = path
        self.functions = functions
        self.finalizeOnLastRelease = finalizeOnLastRelease
    }

    /// The module at `path`, loaded and initialised on first use. Pair every call with `release`.
    static func acquire(path: String) throws(SecureKeyError) -> PKCS11Module {
        try PKCS11ModuleRegistry.shared.acquire(path: path)
    }

    /// Gives back one `acquire`; the last one finalizes the module. The library stays mapped
    /// (see PKCS11ModuleRegistry) so a later acquire initialises it again.
    func release() {
        PKCS11ModuleRegistry.shared.release(self)
    }

    /// The function `name` from the list, or `.operationFailed(CKR_FUNCTION_NOT_SUPPORTED)` when
    /// the module leaves that slot empty.
    func function<F>(_ slot: KeyPath<CK_FUNCTION_LIST, F?>, _ name: String) throws(SecureKeyError) -> F {
        guard let function = functions.pointee[keyPath: slot] else {
            throw PKCS11ReturnValue.failure(CKR_FUNCTION_NOT_SUPPORTED, name)
        }
        return function
    }

    /// dlopen, C_GetFunctionList and C_Initialize (CKF_OS_LOCKING_OK: the module may use its own
    /// OS mutexes; we pass no callbacks).
    fileprivate static func load(path: String) throws(SecureKeyError) -> PKCS11Module {
        let device = "PKCS#11 module \(path)"
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw SecureKeyError.deviceMissing(device: device, fix: "no such file: install the token's module "
                + "(softhsm2 for /usr/lib/softhsm/libsofthsm2.so, libtpm2-pkcs11-1 for libtpm2_pkcs11.so.1, "
                + "or the secure element vendor's module) or correct the module path in the config")
        }
        // Loaded RTLD_LOCAL (SharedLibrary.open): the module's own OpenSSL or tss2 stays out of
        // the global namespace.
        let handle: UnsafeMutableRawPointer
        switch SharedLibrary.open(path) {
        case .success(let loaded):
            handle = loaded
        case .failure(.staticExecutable):
            throw SecureKeyError.deviceMissing(device: device, fix: SharedLibrary.staticExecutableFix)
        case .failure(.notLoadable(let reason)):
            throw SecureKeyError.deviceMissing(device: device, fix: "cannot load it (\(reason)): install its dependencies or the module built for this board")
        }
        guard let symbol = dlsym(handle, "C_GetFunctionList") else {
            dlclose(handle)
            throw SecureKeyError.deviceMissing(device: device, fix: "not a PKCS#11 module (no C_GetFunctionList): check the module path in the config")
        }
        let getFunctionList = unsafeBitCast(symbol, to: CK_C_GetFunctionList.self)
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>? = nil
        let listed = getFunctionList(&list)
        guard listed == CKR_OK, let list else {
            throw PKCS11ReturnValue.failure(listed, "C_GetFunctionList (\(path))")
        }
        guard list.pointee.version.major == 2 else {
            throw SecureKeyError.deviceMissing(device: device, fix: "module speaks PKCS#11 \(list.pointee.version.major).\(list.pointee.version.minor); a 2.x module is needed")
        }
        guard let initialize = list.pointee.C_Initialize else {
            throw PKCS11ReturnValue.failure(CKR_FUNCTION_NOT_SUPPORTED, "C_Initialize (\(path))")
        }
        var arguments = CK_C_INITIALIZE_ARGS()
        arguments.flags = CKF_OS_LOCKING_OK
        let initialized = withUnsafeMutablePointer(to: &arguments) { initialize(UnsafeMutableRawPointer($0)) }
        switch initialized {
        case CKR_OK:
            return PKCS11Module(path: path, functions: list, finalizeOnLastRelease: true)
        case CKR_CRYPTOKI_ALREADY_INITIALIZED:
            return PKCS11Module(path: path, functions: list, finalizeOnLastRelease: false)
        default:
            throw PKCS11ReturnValue.failure(initialized, "C_Initialize (\(path))")
        }
    }

    fileprivate func finalize() {
        guard finalizeOnLastRelease, let finalize = functions.pointee.C_Finalize else { return }
        _ = finalize(nil)
    }
}

/// The process's loaded modules, by canonical path.
///
/// The dlopen handle is never closed: modules such as SoftHSM (OpenSSL inside) and
/// tpm2-pkcs11 (tss2, SQLite) register exit handlers and thread-local destructors that crash
/// the process at exit if their code was unmapped, and a second dlopen of the same file returns
/// the same handle anyway. Only C_Initialize/C_Finalize follow the users, so SoftHSM rereads
/// SOFTHSM2_CONF when a later vault initialises it again.
final class PKCS11ModuleRegistry: @unchecked Sendable {
    // @unchecked Sendable: `modules` and each module's `users` change only under `lock`.
    static let shared = PKCS11ModuleRegistry()
    private let lock = Lock()
    private var modules: [String: PKCS11Module] = [:]

    func acquire(path: String) throws(SecureKeyError) -> PKCS11Module {
        let key = Self.canonical(path)
        return try lock.withLock { () throws(SecureKeyError) -> PKCS11Module in
            if let module = modules[key] {
                module.users += 1
                return module
            }
            let module = try PKCS11Module.load(path: path)
            module.users = 1
            modules[key] = module
            return module
        }
    }

    func release(_ module: PKCS11Module) {
        lock.withLock {
            module.users -= 1
            guard module.users == 0 else { return }
            module.finalize()
            if let key = modules.first(where: { $0.value === module })?.key { modules[key] = nil }
        }
    }

    /// realpath, so a symlink and its target share one initialisation.
    private static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

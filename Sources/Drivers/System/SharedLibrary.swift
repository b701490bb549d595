// Loading a shared library at run time (the tss2 libraries; a PKCS#11 module is loaded by the
// carkey-pkcs11-bridge process instead, docs/pkcs11-bridge.md), and refusing to
// in a fully static executable.
//
// A fully static glibc executable can call dlopen, but the library it loads brings its own
// libc.so: two allocators, two sets of thread-local state and exit handlers in one process.
// Memory allocated on one side and freed on the other, or a destructor running against the
// wrong copy, crashes the process. That is what the static agent did in every vault path
// (segmentation faults in `keys`, `backup`, `vault migrate`; "double free" on SIGTERM with a
// PKCS#11 token), and glibc's linker warning says as much. So the static binary never tries:
// the refusal names the build that can load the library instead.
#if canImport(Glibc)
import Glibc
#endif
import CShims

public enum SharedLibrary {
    /// Why a library could not be loaded.
    public enum LoadFailure: Error, Equatable, Sendable {
        /// This executable is fully static: loading a shared library is refused without trying.
        case staticExecutable
        /// dlopen failed; dlerror's text (a missing file, a missing dependency, wrong ELF class).
        case notLoadable(String)
    }

    /// Whether this process runs without the dynamic loader. The kernel passes the program
    /// interpreter's load address as AT_BASE in the auxiliary vector; an executable with no
    /// interpreter (static, or static-pie) gets 0.
    public static var executableIsFullyStatic: Bool {
        ock_interpreter_base() == 0
    }

    /// dlopen with RTLD_NOW | RTLD_LOCAL: a library with a missing dependency fails here, not at
    /// its first call, and its symbols stay out of the global namespace.
    public static func open(_ path: String) -> Result<UnsafeMutableRawPointer, LoadFailure> {
        if executableIsFullyStatic { return .failure(.staticExecutable) }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(.notLoadable(dlerror().map { String(cString: $0) } ?? "dlopen failed"))
        }
        return .success(handle)
    }

    /// The fix to print when `.staticExecutable` stops a vault from opening.
    public static let staticExecutableFix =
        "this carkey-agent is fully static and cannot load shared libraries; the tpm2 key vault "
        + "needs the glibc build of carkey-agent (`make glibc`, build/glibc/carkey-agent; docs/operations.md, "
        + "\"Which binary for which vault\"), or set the key vault to \"file\""
}

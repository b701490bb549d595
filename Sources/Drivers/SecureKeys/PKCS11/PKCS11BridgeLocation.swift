// Where the agent finds carkey-pkcs11-bridge: the config's vault "bridge" key when set, else
// beside the running executable (/proc/self/exe's folder: build/static, the .deb's /usr/bin
// has none, a tarball's folder), else /usr/libexec/opencarkey/ (the .deb).
#if canImport(Glibc)
import Glibc
#endif

public enum PKCS11BridgeLocation {
    public static let executableName = "carkey-pkcs11-bridge"
    public static let installedFolder = "/usr/libexec/opencarkey"

    /// The bridge to start: `configured` when given (it must be executable), else the first
    /// executable candidate.
    static func find(configured: String?) throws(SecureKeyError) -> String {
        if let configured {
            guard access(configured, X_OK) == 0 else {
                throw unusable(configured, because: "it is not an executable file (the vault's \"bridge\" key in the config names it)")
            }
            return configured
        }
        let candidates = [besideExecutable(), installedFolder + "/" + executableName].compactMap { $0 }
        if let found = candidates.first(where: { access($0, X_OK) == 0 }) { return found }
        throw SecureKeyError.deviceMissing(device: "PKCS#11 bridge (\(executableName))",
            fix: "not found in \(candidates.joined(separator: " or ")): install the package that ships it (the .deb puts it in "
                + "\(installedFolder)/), copy it beside carkey-agent, or name it with the vault's \"bridge\" key in the config")
    }

    /// The error for a bridge that cannot be started or stopped answering.
    static func unusable(_ path: String, because reason: String) -> SecureKeyError {
        .deviceMissing(device: "PKCS#11 bridge \(path)",
                       fix: "\(reason); reinstall it (make static builds it beside carkey-agent; the .deb ships it in "
                           + "\(installedFolder)/) and check the module path in the config")
    }

    private static func besideExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash]) + "/" + executableName
    }
}

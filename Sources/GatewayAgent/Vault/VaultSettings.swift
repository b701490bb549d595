// The config file's "vault" object (issue 18): where the car keeps its storage key and its
// identity. Absent, or "provider": "file": the storage.key file and a sealed identity row, as
// before. "tpm2": a TPM 2.0 through a TCTI (optionally binding the storage key to PCRs).
// "pkcs11": a token through a PKCS#11 module, logged in with a PIN read from a file (never the
// command line, never the config file itself, never logged), through the carkey-pkcs11-bridge
// helper (optional "bridge": its path, when it is not beside carkey-agent or in
// /usr/libexec/opencarkey).
import Drivers

enum VaultSettings: Equatable {
    case file
    case tpm2(tcti: String, pcrs: [Int])
    case pkcs11(module: String, token: String, pinFile: String, bridge: String? = nil)

    static let keys: Set<String> = ["provider", "tcti", "pcrs", "module", "token", "pinFile", "bridge"]
    static let providers = ["file", "tpm2", "pkcs11"]
    /// Which keys each provider takes: a key meant for another provider is a mistake to name.
    private static let keysOf: [String: Set<String>] = [
        "file": ["provider"],
        "tpm2": ["provider", "tcti", "pcrs"],
        "pkcs11": ["provider", "module", "token", "pinFile", "bridge"],
    ]

    var kind: String {
        switch self {
        case .file: return "file"
        case .tpm2: return "tpm2"
        case .pkcs11: return "pkcs11"
        }
    }

    /// What `config` on the console shows: the provider and where it reaches the device; the
    /// PIN file by path, never its content.
    var displayText: String {
        switch self {
        case .file: return "file (storage.key in the state directory, identity sealed in the store)"
        case .tpm2(let tcti, let pcrs):
            return "tpm2, tcti \(tcti), storage key " + (pcrs.isEmpty ? "not bound to PCRs" : "bound to sha256 PCRs \(pcrs.map(String.init).joined(separator: ","))")
        case .pkcs11(let module, let token, let pinFile, let bridge):
            return "pkcs11, module \(module), token \(token), PIN file \(pinFile)" + (bridge.map { ", bridge \($0)" } ?? "")
        }
    }

    /// The file's "vault" object; every error names its key and never echoes a value.
    static func read(_ vault: ConfigReader, baseDirectory: String) throws(ConfigError) -> VaultSettings {
        let provider = try vault.string("provider", expected: "one of file, tpm2, pkcs11") { providers.contains($0) ? $0 : nil } ?? "file"
        let allowed = keysOf[provider] ?? []
        if let stray = vault.fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            let owner = ["tcti", "pcrs"].contains(stray) ? "tpm2" : "pkcs11"
            throw .invalidValue(key: vault.key(stray), expected: "no '\(stray)' with provider \(provider) (it belongs to provider \(owner))")
        }
        switch provider {
        case "tpm2":
            let tcti = try vault.string("tcti", expected: "a TCTI string such as device:/dev/tpmrm0 or swtpm:host=127.0.0.1,port=2321") {
                Self.isTCTI($0) ? $0 : nil
            } ?? TPM2KeyVault.defaultTCTI
            // carkey-agent speaks to the TPM itself (no tpm2-tss): only the transports it
            // implements are accepted, and the two it cannot offer say what to use instead.
            if tcti.hasPrefix("tabrmd") {
                throw .invalidValue(key: vault.key("tcti"), expected: "device:PATH or swtpm:host=H,port=P; tabrmd (tpm2-abrmd) needs D-Bus and "
                                    + "tpm2-tss, which carkey-agent does not use: \"device:/dev/tpmrm0\" is the kernel's resource manager")
            }
            if tcti.hasPrefix("mssim") {
                throw .invalidValue(key: vault.key("tcti"), expected: "device:PATH or swtpm:host=H,port=P; mssim (the Microsoft simulator's "
                                    + "framing) is not supported: run swtpm, or use \"device:/dev/tpmrm0\"")
            }
            guard TPM2KeyVault.isSupportedTCTI(tcti) else {
                throw .invalidValue(key: vault.key("tcti"), expected: "device:PATH (an absolute path) or swtpm:host=IP,port=P")
            }
            return .tpm2(tcti: tcti, pcrs: try pcrs(vault))
        case "pkcs11":
            let path = "an absolute path, or one relative to the config file"
            guard let module = try vault.string("module", expected: "the PKCS#11 module: " + path, { ConfigPaths.resolve($0, against: baseDirectory) }) else {
                throw .invalidValue(key: vault.key("module"), expected: "the PKCS#11 module's path (required with provider pkcs11)")
            }
            guard let token = try vault.string("token", expected: "the token label, 1 to 32 characters", { (1...32).contains($0.utf8.count) ? $0 : nil }) else {
                throw .invalidValue(key: vault.key("token"), expected: "the token label (required with provider pkcs11)")
            }
            guard let pinFile = try vault.string("pinFile", expected: "the PIN file: " + path, { ConfigPaths.resolve($0, against: baseDirectory) }) else {
                throw .invalidValue(key: vault.key("pinFile"), expected: "the path of a file holding the user PIN (mode 0600 or 0400; required with provider pkcs11)")
            }
            // Absolute after resolving: the agent starts it with posix_spawn, never through PATH.
            let bridge = try vault.string("bridge", expected: "the carkey-pkcs11-bridge executable: " + path) {
                ConfigPaths.resolve($0, against: baseDirectory).flatMap { $0.hasSuffix("/" + PKCS11BridgeLocation.executableName) ? $0 : nil }
            }
            return .pkcs11(module: module, token: token, pinFile: pinFile, bridge: bridge)
        default:
            return .file
        }
    }

    /// "device:PATH", "swtpm:…", "mssim:…", "tabrmd:…" (tpm2-tss's TCTI names), printable, short;
    /// which of them work is the vault's to say (TPM2KeyVault.isSupportedTCTI).
    private static func isTCTI(_ text: String) -> Bool {
        guard (1...256).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else { return false }
        return ["device", "swtpm", "mssim", "tabrmd"].contains { text == $0 || text.hasPrefix($0 + ":") }
    }

    /// PCR indexes 0-23 of the SHA-256 bank, each at most once.
    private static func pcrs(_ vault: ConfigReader) throws(ConfigError) -> [Int] {
        guard let value = vault.fields["pcrs"] else { return [] }
        let expected = "an array of distinct PCR indexes 0 to 23"
        guard case .array(let items) = value, items.count <= 24 else { throw .invalidValue(key: vault.key("pcrs"), expected: expected) }
        var indexes = [Int]()
        for item in items {
            guard case .integer(let index) = item, (0...23).contains(index), !indexes.contains(Int(index)) else {
                throw .invalidValue(key: vault.key("pcrs"), expected: expected)
            }
            indexes.append(Int(index))
        }
        return indexes
    }
}

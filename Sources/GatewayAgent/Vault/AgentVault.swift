// Opening the configured key vault (issue 18), before the store: the agent, the migration.
// A device that is missing or refuses us stops the start with one line naming the fix
// (SecureKeyError's text); nothing is written to the state directory before that.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

enum AgentVault {
    /// Why the vault could not be opened; one line, no PIN.
    struct OpenFailure: Error, CustomStringConvertible {
        let description: String
        /// The device refused the PIN or is locked: trying again spends a try.
        var refusedAccess = false
    }

    /// The exit status of a start the device refused (EX_CONFIG, sysexits.h). The unit lists it
    /// in RestartPreventExitStatus=: a token counts wrong PINs and locks after a few, so a
    /// restart every 2 s with a wrong PIN file would lock the PIN within seconds.
    static let doNotRetryStatus: Int32 = 78

    /// The device vault for `settings`, or nil for the file vault (CarStore's own key file).
    static func open(_ settings: VaultSettings, stateDirectory: String) throws(OpenFailure) -> (any CarKeyVault)? {
        switch settings {
        case .file:
            return nil
        case .tpm2(let tcti, let pcrs):
            do {
                return try TPM2KeyVault(tcti: tcti, stateDirectory: stateDirectory, pcrs: pcrs)
            } catch {
                throw OpenFailure(description: "key vault: tpm2: \(error)")
            }
        case .pkcs11(let module, let token, let pinFile, let bridge):
            var pin: Bytes
            do { pin = try VaultPINFile.read(pinFile) } catch {
                throw OpenFailure(description: "key vault: pkcs11: \(error)")
            }
            defer { ConstantTime.wipe(&pin) }
            do {
                // A bridge that dies while the agent runs is restarted with the PIN file read again.
                let reloadPIN = { () throws(SecureKeyError) -> Bytes in
                    do { return try VaultPINFile.read(pinFile) } catch {
                        throw SecureKeyError.locked(device: "PKCS#11 token \"\(token)\"", fix: "\(error)")
                    }
                }
                return try PKCS11KeyVault(modulePath: module, tokenLabel: token, pin: pin, stateDirectory: stateDirectory,
                                          bridge: bridge, reloadPIN: reloadPIN)
            } catch {
                // A wrong PIN reads as "refused access"; the file is where to fix it.
                guard case .locked = error else { throw OpenFailure(description: "key vault: pkcs11: \(error)") }
                throw OpenFailure(description: "key vault: pkcs11: \(error) (PIN read from vault.pinFile \(pinFile); "
                                  + "not retried: the agent exits with status \(doNotRetryStatus), which systemd does not restart)",
                                  refusedAccess: true)
            }
        }
    }

    /// The start-up line: `carkey-agent: key vault: <kind>: <summary>`.
    static func startupLine(_ vault: (any CarKeyVault)?, stateDirectory: String) -> String {
        guard let vault else {
            return "carkey-agent: key vault: file: storage key in \(StateDirectory(path: stateDirectory).storageKeyPath), identity sealed in the store"
        }
        return "carkey-agent: key vault: \(vault.kind): \(vault.summary)"
    }

    /// A storage or vault error met while opening the store with a vault, as one start line.
    static func describe(_ error: any Error) -> String {
        if let error = error as? SecureKeyError { return "key vault: \(error)" }
        if case .external(let text)? = error as? StorageError { return "key vault: \(text)" }
        return "\(error)"
    }
}

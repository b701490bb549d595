// The PKCS#11 user PIN, read from the file the config names (vault.pinFile). A PIN on the
// command line shows in ps and the shell history, one in agent.json in every config listing
// and OTA payload; a 0600/0400 file owned by the agent's user does neither. The PIN is never
// printed: errors name the file and what is wrong with it, not what it holds.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

enum VaultPINFile {
    static let maxBytes = 128

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// The PIN bytes (one trailing newline dropped). The caller wipes them after C_Login.
    static func read(_ path: String) throws(Refused) -> Bytes {
        let fd: FileDescriptor
        do {
            // O_NOFOLLOW: a symlink planted in place of the file is refused; O_NONBLOCK: a FIFO
            // cannot hang the start (fstat below refuses it).
            fd = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        } catch {
            throw Refused(description: "vault.pinFile \(path) cannot be read (\(error)): create it as the agent's user with mode 0600 holding the token's user PIN")
        }
        defer { fd.close() }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Refused(description: "vault.pinFile \(path) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw Refused(description: "vault.pinFile \(path) is owned by uid \(info.st_uid), not by the agent's user (uid \(geteuid())): chown it")
        }
        let mode = info.st_mode & 0o7777
        guard mode == 0o600 || mode == 0o400 else {
            throw Refused(description: "vault.pinFile \(path) has mode \(String(mode, radix: 8)): the PIN must be readable by the agent's user only (chmod 0600 or 0400)")
        }
        var bytes: Bytes
        do { bytes = try fd.read(upTo: maxBytes + 1) } catch {
            throw Refused(description: "vault.pinFile \(path) cannot be read (\(error))")
        }
        if bytes.last == 0x0A { bytes.removeLast() }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard (1...maxBytes).contains(bytes.count), !bytes.contains(0x0A) else {
            ConstantTime.wipe(&bytes)
            throw Refused(description: "vault.pinFile \(path) must hold the PIN on one line (1 to \(maxBytes) bytes)")
        }
        return bytes
    }
}

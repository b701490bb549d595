// `--state-dir DIR` for the agent's tools (keys, events, pair), and opening the store that is
// already there: a tool never creates a state directory, a database or a storage key.
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers

/// A runtime failure of an agent tool: one line on stderr, exit 1.
struct AgentToolFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum StateDirectoryArgument {
    static let option = Option.value("state-dir", placeholder: "DIR", help: "The agent's state directory")

    static func path(_ arguments: ParsedArguments) throws -> String {
        var directory = try arguments.require("state-dir")
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        guard !directory.isEmpty else { throw UsageError.invalidValue("", for: "--state-dir", expected: "a directory path") }
        return directory
    }

    /// The user owning `directory` (the folder above the store is usually readable even when
    /// the store is not), else the service user of the shipped systemd unit. /etc/passwd is
    /// read directly: getpwuid would pull glibc's NSS into the static binary.
    private static func ownerName(of directory: String) -> String {
        var info = stat()
        guard stat(directory, &info) == 0, let passwd = try? Files.read("/etc/passwd") else { return "carkey" }
        for line in passwd.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            if fields.count > 2, String(decoding: fields[2], as: UTF8.self) == String(info.st_uid) {
                return String(decoding: fields[0], as: UTF8.self)
            }
        }
        return "carkey"
    }

    /// Opens the store in `directory` (works while the agent runs: WAL lets readers in), with
    /// the key vault that seals it when there is one (ToolVault, --config).
    static func openStore(_ directory: String, _ arguments: ParsedArguments) throws -> CarStore {
        let layout = StateDirectory(path: directory)
        do {
            _ = try Files.mode(of: layout.databasePath)
        } catch let error as Errno where error.rawValue == EACCES {
            // The usual cause: the tool run as a login user on a store that belongs to the
            // service user (0700). "Not found" would send the reader looking for a missing file.
            throw AgentToolFailure("permission denied: cannot read the car store \(layout.databasePath) as this user; "
                                   + "run the tool as the store's owner: sudo -u \(ownerName(of: directory)) carkey-agent ...")
        } catch let error as Errno where error.rawValue != ENOENT {
            throw AgentToolFailure("cannot read the car store \(layout.databasePath): \(error)")
        } catch {
            throw AgentToolFailure("no car store in \(directory) (\(StateDirectory.databaseFileName) not found)")
        }
        let vault = try ToolVault.open(for: directory, arguments)
        do {
            return try CarStore.open(stateDirectory: directory, keyProvider: vault)
        } catch {
            throw AgentToolFailure("cannot open the store in \(directory): \(error)")
        }
    }
}

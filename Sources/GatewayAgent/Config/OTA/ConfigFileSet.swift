// The files of an over-the-air config change, all beside agent.json (same folder, so every
// rename is atomic and one directory fsync covers them):
//   agent.json            the config in force
//   agent.json.last-good  the config before the change being applied (the rollback copy)
//   agent.json.pending    present only while a change is applied and not yet healthy
//
// Order of an apply: last-good, pending marker, the new file, then (after the health check)
// the marker is removed, or last-good is put back first. Each write is temp + fsync + rename +
// directory fsync (Files.writeAtomically), so a power cut at any point leaves agent.json
// equal to the old or the new file, and a leftover marker tells the next start that the new
// one never passed its health check: recovery puts last-good back.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

struct ConfigFileSet: Sendable {
    let path: String
    var lastGoodPath: String { path + ".last-good" }
    var pendingPath: String { path + ".pending" }

    /// A step of an apply; tests stop after one to stand in for a power cut there.
    enum Step: Int, CaseIterable, Sendable { case savedLastGood, markedPending, wroteNew, finished }

    func readCurrent() throws -> [UInt8] { try Files.read(path, limit: AgentConfig.maxFileBytes) }

    /// Puts `new` in force, keeping `old` as last-good. `stopAfter` is for crash tests only.
    func install(new: [UInt8], old: [UInt8], version: UInt64, stopAfter: Step? = nil) throws {
        let mode = (try? Files.mode(of: path)) ?? 0o600
        try Files.writeAtomically(old, to: lastGoodPath, mode: mode)
        if stopAfter == .savedLastGood { return }
        try Files.writeAtomically(Array("\(version)\n".utf8), to: pendingPath, mode: 0o600)
        if stopAfter == .markedPending { return }
        try Files.writeAtomically(new, to: path, mode: mode)
    }

    /// The new file passed its health check: it is the config now.
    func commit() throws {
        try removeMarker()
    }

    /// Puts last-good back in force and clears the marker.
    func rollBack() throws {
        let good = try Files.read(lastGoodPath, limit: AgentConfig.maxFileBytes)
        let mode = (try? Files.mode(of: path)) ?? 0o600
        try Files.writeAtomically(good, to: path, mode: mode)
        try removeMarker()
    }

    /// The version named by a marker left by an interrupted apply; nil when there is none.
    func interruptedVersion() -> UInt64? {
        guard access(pendingPath, F_OK) == 0 else { return nil }
        let text = (try? Files.read(pendingPath, limit: 64)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return UInt64(text.filter { !$0.isWhitespace }) ?? 0
    }

    private func removeMarker() throws {
        guard unlink(pendingPath) == 0 || errno == ENOENT else { throw Errno.current("unlink \(pendingPath)") }
        try Files.syncDirectory(of: pendingPath)
    }
}

/// Run before the config file is read at start: undoes an apply a crash interrupted.
enum ConfigRecovery {
    struct Outcome: Equatable, Sendable {
        /// The version whose apply was interrupted (0 if the marker was unreadable).
        let version: UInt64
    }

    /// nil when the last apply finished. Otherwise last-good is back in force (when the crash
    /// came before the new file was written, last-good equals it anyway).
    static func recoverIfInterrupted(configPath: String) throws -> Outcome? {
        let files = ConfigFileSet(path: configPath)
        guard let version = files.interruptedVersion() else { return nil }
        try files.rollBack()
        return Outcome(version: version)
    }
}

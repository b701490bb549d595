// One running carkey-pkcs11-bridge (docs/pkcs11-bridge.md): started with the module path as
// its only argument, asked one request at a time over its pipes. A bridge that exits, stalls
// or answers out of bounds is stopped and reported as gone; PKCS11Token decides on a restart.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

final class PKCS11BridgeProcess {
    /// How long one answer may take: a hardware token's key generation takes seconds, a hung
    /// module must not hang the agent for ever.
    static let answerTimeoutMillis: Int32 = 60_000

    let executable: String
    private let child: ChildProcess
    private(set) var isGone = false
    /// Its process ID (tests kill it to check the restart).
    var pid: pid_t { child.pid }

    init(executable: String, modulePath: String) throws(SecureKeyError) {
        self.executable = executable
        do {
            child = try ChildProcess(executable, [modulePath])
        } catch {
            throw PKCS11BridgeLocation.unusable(executable, because: "cannot start it (\(error))")
        }
    }

    deinit { child.stop() }

    /// Sends `request` (a whole frame; wiped in place here, it may hold the PIN) and returns
    /// the answer.
    func exchange(_ request: inout Bytes) throws(SecureKeyError) -> PKCS11BridgeAnswer {
        defer { ConstantTime.wipe(&request) }
        guard !isGone else { throw gone("it was stopped after an earlier failure") }
        do {
            try child.input.writeAll(request)
        } catch {
            throw gone("writing to it failed: \(exitReason())")
        }
        var header = try read(4)
        let length = Int(header.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        ConstantTime.wipe(&header)
        guard (1...PKCS11BridgeFrame.maxBody).contains(length) else {
            throw gone("it announced an answer of \(length) bytes (at most \(PKCS11BridgeFrame.maxBody))")
        }
        var body = try read(length)
        defer { ConstantTime.wipe(&body) }
        do {
            return try PKCS11BridgeAnswer.parse(body)
        } catch {
            throw gone("its answer does not parse (\(error))")
        }
    }

    /// Ends the bridge: stdin closed (it closes the session and finalizes the module), then
    /// SIGKILL if it lingers.
    func stop() {
        isGone = true
        child.stop()
    }

    /// Exactly `count` bytes of its stdout, each wait bounded. Read straight into one buffer,
    /// so no intermediate copy of an answer (which may hold a secret) is left unwiped.
    private func read(_ count: Int) throws(SecureKeyError) -> Bytes {
        var bytes = Bytes(repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let ready: [PollEvents]
            do { ready = try Poll.wait([(child.output, .readable)], timeoutMillis: Self.answerTimeoutMillis) } catch {
                ConstantTime.wipe(&bytes)
                throw gone("waiting for its answer failed (\(error))")
            }
            guard !ready[0].isEmpty else {
                ConstantTime.wipe(&bytes)
                throw gone("no answer within \(Self.answerTimeoutMillis / 1000) s")
            }
            let start = filled
            let n: Int
            do {
                n = try bytes.withUnsafeMutableBytes { raw in
                    Result { () throws(Errno) in try child.output.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[start...])) }
                }.get()
            } catch {
                ConstantTime.wipe(&bytes)
                throw gone("reading from it failed (\(error))")
            }
            guard n > 0 else {
                ConstantTime.wipe(&bytes)
                throw gone(exitReason())
            }
            filled += n
        }
        return bytes
    }

    /// Why the bridge stopped answering, once it is reaped.
    private func exitReason() -> String {
        let status = child.stop(graceMillis: 500)
        switch status {
        case .some(let code) where code > 128: return "it was killed by signal \(code - 128)"
        case .some(let code): return "it exited with status \(code)"
        case .none: return "it closed its output"
        }
    }

    private func gone(_ reason: String) -> SecureKeyError {
        isGone = true
        child.stop(graceMillis: 0)
        return PKCS11BridgeLocation.unusable(executable, because: reason)
    }
}

// A private SoftHSM2 token for one test: its own softhsm2.conf and token folder under /tmp,
// initialised with softhsm2-util. SoftHSM reads SOFTHSM2_CONF at C_Initialize, in the
// carkey-pkcs11-bridge process a vault starts with this process's environment, so `activate`
// sets it before a vault opens.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

public final class SoftHSMToken {
    public static let modulePath = "/usr/lib/softhsm/libsofthsm2.so"

    public let root: String
    public let configPath: String
    public let label: String
    public let pin: Bytes

    /// softhsm2-util on this machine, or nil.
    public static var utilityPath: String? {
        ["/usr/bin/softhsm2-util", "/usr/local/bin/softhsm2-util"].first { access($0, X_OK) == 0 }
    }

    /// softhsm2-util, or HarnessUnavailable (tests skip, or fail under CARKEY_REQUIRE_ARTIFACTS=1).
    /// The vault reaches the module through carkey-pkcs11-bridge, which `make build` puts beside
    /// the test bundle and the debug agent: without it a vault cannot open.
    public static func require() throws(HarnessUnavailable) -> String {
        guard let utility = utilityPath, access(modulePath, R_OK) == 0 else {
            throw HarnessUnavailable("SoftHSM2 not installed (softhsm2-util, \(modulePath)): apt-get install softhsm2")
        }
        let bridge = AgentProcess.besideTheRunningProgram("carkey-pkcs11-bridge")
        guard access(bridge, X_OK) == 0 else {
            throw HarnessUnavailable("no \(bridge): `make build` builds it (tools/pkcs11-bridge/build.sh)")
        }
        return utility
    }

    /// A fresh token labelled `label` in a new private folder; SOFTHSM2_CONF now points at it.
    public init(label: String, soPin: String = "87654321", pin: String = "123456") throws {
        let utility = try Self.require()
        self.label = label
        self.pin = Array(pin.utf8)
        root = TestFolders.make(prefix: "opencarkey-softhsm")
        configPath = root + "/softhsm2.conf"
        let tokens = root + "/tokens"
        guard mkdir(tokens, 0o700) == 0 else { throw Failure("mkdir \(tokens): errno \(errno)") }
        try Files.writeAtomically(Array("""
            directories.tokendir = \(tokens)
            objectstore.backend = file
            log.level = ERROR
            slots.removable = false

            """.utf8), to: configPath)
        activate()
        try Self.run([utility, "--init-token", "--free", "--label", label, "--so-pin", soPin, "--pin", pin], logIn: root)
    }

    /// Points SoftHSM (at its next C_Initialize) at this token's folder.
    public func activate() {
        setenv("SOFTHSM2_CONF", configPath, 1)
    }

    public func remove() {
        TestFolders.remove(root)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs `arguments` with this process's environment (so SOFTHSM2_CONF), output to a log in
    /// `folder`; throws unless it exits 0.
    private static func run(_ arguments: [String], logIn folder: String) throws {
        let log = folder + "/softhsm2-util.log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure("spawn \(arguments[0]): \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? Files.read(log)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        // Normal exit with status 0 (the wait status's low 7 bits are a signal, the next 8 the code).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw Failure("\(arguments[0]) \(arguments[1]) failed (wait status \(status)): \(output)")
        }
    }
}

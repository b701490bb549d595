// What the swtpm-backed TPM2 test classes share: a swtpm of their own and scratch folders,
// all removed after each test.
#if canImport(Glibc)
import Glibc
#endif
import TestHarness
import XCTest

class TPM2SwtpmTestCase: XCTestCase {
    private var folders: [String] = []
    private var tpm: TPM2SoftwareTPM?

    override func setUp() {
        // As the agent does (SignalPipe): a write to a TPM socket whose peer died is EPIPE, not death.
        signal(SIGPIPE, SIG_IGN)
    }

    override func tearDown() {
        tpm?.kill()
        tpm = nil
        folders.forEach(TestFolders.remove)
        folders = []
    }

    func folder(_ prefix: String = "opencarkey-tpm2") -> String {
        let made = TestFolders.make(prefix: prefix)
        folders.append(made)
        return made
    }

    /// A fresh swtpm (skipped without swtpm unless CARKEY_REQUIRE_ARTIFACTS=1); `require` may
    /// throw HarnessUnavailable first for other missing tools.
    func startTPM(require: () throws -> Void = {}) throws -> TPM2SoftwareTPM {
        let started = try requireDevice { () throws -> TPM2SoftwareTPM in
            try require()
            return try TPM2SoftwareTPM(stateFolder: folder("opencarkey-swtpm"))
        }
        tpm = started
        return started
    }
}

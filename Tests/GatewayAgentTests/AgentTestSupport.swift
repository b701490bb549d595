// Temporary folders and small helpers for the in-process agent tests.
import XCTest
import Drivers
import TestHarness
@testable import carkey_agent
#if canImport(Glibc)
import Glibc
#endif

enum AgentTestSupport {
    static func temporaryDirectory() -> String { TestFolders.make(prefix: "opencarkey-agent-test") }

    static func removeTree(_ path: String) { TestFolders.remove(path) }
}

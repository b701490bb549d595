// Loading shared libraries at run time: allowed in this dynamically linked test process (the
// refusal in a fully static one is tested with the real static binary, StaticBinaryVaultTests).
import XCTest
@testable import Drivers

final class SharedLibraryTests: XCTestCase {
    func testThisTestProcessHasADynamicLoaderAndLoadsASystemLibrary() throws {
        XCTAssertFalse(SharedLibrary.executableIsFullyStatic, "the test bundle runs under ld.so: AT_BASE is its address")
        let handle = try SharedLibrary.open("libc.so.6").get()
        XCTAssertNotNil(dlsym(handle, "getpid"))
        dlclose(handle)
    }

    func testAMissingLibraryIsNotLoadableWithTheLoadersReason() {
        guard case .failure(.notLoadable(let reason)) = SharedLibrary.open("libopencarkey-no-such-library.so.9") else {
            return XCTFail("a missing library must not load")
        }
        XCTAssertTrue(reason.contains("libopencarkey-no-such-library.so.9"), reason)
    }
}

// LeakSanitizer (make test-asan) checks the product's processes, not the test runner: every
// carkey-agent, carkey and crasher a test spawns is checked at its exit, while the runner ends
// holding XCTest's own objects and the fixtures tests keep on purpose. LeakSanitizer calls this
// weak hook at exit; only the test bundle defines it (the product binaries do not link this
// module).
@_cdecl("__lsan_is_turned_off")
public func leakCheckIsOffInTheTestRunner() -> Int32 { 1 }

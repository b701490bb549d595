// carkey-fuzz: every library-side target. SwiftPM on Linux gives an executable its own `main`
// (an alias of this file's top-level code), which wins over libFuzzer's, so the libFuzzer build
// (scripts/fuzz/build.sh: -sanitize=fuzzer,address -DCARKEY_LIBFUZZER) hands control to
// libFuzzer through LLVMFuzzerRunDriver. The plain build runs the small CLI (list, replay,
// smoke, seed) instead.
#if canImport(Glibc)
import Glibc
#endif
import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzEntry.testOneInput(data, size, targets: FuzzRegistry.all)
}

#if CARKEY_LIBFUZZER
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
    FuzzEntry.testOneInput(data, size, targets: FuzzRegistry.all)
})
#else
exit(FuzzEntry.main(CommandLine.arguments, targets: FuzzRegistry.all))
#endif

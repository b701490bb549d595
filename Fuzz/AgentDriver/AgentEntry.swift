// libFuzzer entry of carkey-agent-fuzz (scripts/fuzz/build.sh compiles it into the agent's
// module): the agent-side targets, selected by CARKEY_FUZZ_TARGET.
import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzEntry.testOneInput(data, size, targets: AgentFuzzTargets.all)
}

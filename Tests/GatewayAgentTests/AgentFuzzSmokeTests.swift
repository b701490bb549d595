// Fuzz smoke for the agent-side targets (config, console): seeds from Fuzz/corpus plus 3000
// deterministic mutations each. Fuzz/Agent/AgentFuzzTargets.swift is symlinked into this target.
import FuzzTargets
import XCTest

final class AgentFuzzSmokeTests: XCTestCase {
    func testAgentTargetsHoldTheirPropertiesOverSeedsAndMutations() {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        let root = parts.joined(separator: "/") + "/Fuzz/corpus"
        for target in AgentFuzzTargets.all {
            let seeds = SmokeRunner.loadCorpus(root + "/" + target.name)
            XCTAssertFalse(seeds.isEmpty, "\(target.name): no seed corpus")
            let outcome = SmokeRunner.run(target, seeds: seeds, mutations: 3000)
            if let violation = outcome.violation {
                XCTFail("\(target.name): \(violation.error) on input \(violation.input.hexString)")
            }
            print("fuzz-smoke \(target.name): \(outcome.executions) execs, \(outcome.accepted) accepted, \(outcome.seeds) seeds")
        }
    }
}

// Fuzz smoke (make test): every registered target over its checked-in seed corpus plus 3000
// deterministic mutations, without libFuzzer. A broken property fails here with its name.
import FuzzTargets
import Protocol
import XCTest

final class FuzzSmokeTests: XCTestCase {
    static let corpusRoot: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3) // Tests/FuzzTargetsTests/FuzzSmokeTests.swift
        return parts.joined(separator: "/") + "/Fuzz/corpus"
    }()

    func testEveryTargetHoldsItsPropertiesOverSeedsAndMutations() {
        XCTAssertGreaterThanOrEqual(FuzzRegistry.all.count, 25)
        for target in FuzzRegistry.all {
            let seeds = SmokeRunner.loadCorpus(Self.corpusRoot + "/" + target.name)
            XCTAssertFalse(seeds.isEmpty, "\(target.name): no seed corpus in Fuzz/corpus/\(target.name)")
            let outcome = SmokeRunner.run(target, seeds: seeds, mutations: 3000)
            if let violation = outcome.violation {
                XCTFail("\(target.name): \(violation.error) on input \(violation.input.hexString)")
            }
            print("fuzz-smoke \(target.name): \(outcome.executions) execs, \(outcome.accepted) accepted, \(outcome.seeds) seeds")
        }
    }

    /// The check itself can fail: a property that is false must be reported.
    func testAViolatedPropertyIsReported() {
        let broken = FuzzTarget("broken", "always violated") { _ throws(PropertyViolation) in
            try require(false, "deliberately broken")
            return true
        }
        let outcome = SmokeRunner.run(broken, seeds: [[1]], mutations: 0)
        XCTAssertEqual(outcome.violation?.error.property, "deliberately broken")
    }

    func testMutationsAreDeterministic() {
        var a = SplitMix64(seed: 7), b = SplitMix64(seed: 7)
        for _ in 0..<100 { XCTAssertEqual(Mutator.mutate([1, 2, 3, 4], &a), Mutator.mutate([1, 2, 3, 4], &b)) }
    }
}

// A built executable running beside the test (the agent): the harness's AgentProcess, which
// the benchmarks and the long run use too (posix_spawn, output to files, bounded waits,
// always stopped by its owner).
import TestHarness

typealias BackgroundProcess = AgentProcess

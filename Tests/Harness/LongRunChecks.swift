// The long run's verdicts, each a sentence when it fails. Warm-up (the first quarter of the
// visits: SQLite's page cache filling, malloc arenas settling) is excluded from the memory and
// CPU comparisons; medians of several samples keep one unlucky sample from deciding.
extension LongRunReport {
    static func median(_ values: [Int]) -> Int {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}

public enum LongRunChecks {
    public static func apply(_ plan: LongRunPlan, to report: inout LongRunReport, stderrTail: String) {
        var failures = report.failures
        let total = report.samples.last?.sessions ?? 0
        // RSS: the second quarter against the last tenth.
        let secondQuarter = report.samples.filter { $0.sessions > total / 4 && $0.sessions <= total / 2 }
        let lastTenth = report.samples.filter { $0.sessions >= total - total / 10 }
        report.rssAfterWarmup = LongRunReport.median(secondQuarter.map(\.process.residentBytes))
        report.rssAtEnd = LongRunReport.median(lastTenth.map(\.process.residentBytes))
        if secondQuarter.count < 3 || lastTenth.count < 3 {
            failures.append("too few samples to judge memory (\(secondQuarter.count) after warm-up, \(lastTenth.count) at the end)")
        } else if report.rssAtEnd - report.rssAfterWarmup >= plan.rssGrowthLimitBytes {
            failures.append("RSS grew \((report.rssAtEnd - report.rssAfterWarmup) / 1024) KiB after warm-up "
                            + "(\(report.rssAfterWarmup / 1024) -> \(report.rssAtEnd / 1024) KiB; limit \(plan.rssGrowthLimitBytes / 1024) KiB)")
        }
        // CPU per visit: the last quarter against the second (not a speed target: O(n) creep).
        // Divided by the phones' CPU per visit in the same quarter when known: other builds on
        // a shared machine slow both alike, growth in the agent alone is what counts.
        let quarters = report.cpuPerSessionByQuarter, phones = report.phonesCPUPerSessionByQuarter
        if quarters.count == 4, quarters[1] > 0 {
            let scale = phones.count == 4 && phones[1] > 0 && phones[3] > 0 ? phones[3] / phones[1] : 1
            if quarters[3] > quarters[1] * scale * plan.cpuPerSessionFactor {
                failures.append("CPU per session grew from \(format1(quarters[1])) ms (second quarter) to \(format1(quarters[3])) ms (last)"
                                + (scale == 1 ? "" : " while the phones' changed \(format1(scale))x"))
            }
        } else {
            failures.append("CPU per session could not be measured: \(quarters)")
        }
        // Descriptors and threads: at rest after the load as at rest before it.
        if let after = report.restAfter {
            if after.openDescriptors > report.restBefore.openDescriptors {
                failures.append("open descriptors at rest grew \(report.restBefore.openDescriptors) -> \(after.openDescriptors)")
            }
            if after.threads > report.restBefore.threads {
                failures.append("threads at rest grew \(report.restBefore.threads) -> \(after.threads)")
            }
        } else {
            failures.append("the agent was not running after the load: \(stderrTail.suffix(600))")
        }
        if report.exitStatus != 0 {
            failures.append("exit status on SIGTERM was \(report.exitStatus.map(String.init) ?? "none"), not 0: \(stderrTail.suffix(600))")
        }
        // Every event written reached the broker; the outbox is empty.
        if report.delivered.distinctSequences < Int(report.eventsWritten) || report.finalOutboxDepth != 0 {
            failures.append("\(report.eventsWritten) events written, \(report.delivered.distinctSequences) distinct delivered "
                            + "(highest seq \(report.delivered.highestSequence)), outbox depth \(report.finalOutboxDepth)")
        }
        // Valid owners: every visit ends ok or busy; rateLimited would mean the limits hit owners.
        if !report.tally.unexpected.isEmpty {
            failures.append("visits that failed: \(LoadTally(counts: report.tally.unexpected))")
        }
        if report.tally.ok == 0 { failures.append("no visit succeeded") }
        report.failures = failures
    }
}

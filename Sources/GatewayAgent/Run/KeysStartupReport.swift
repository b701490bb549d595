// What the agent says about its keys and clock when it starts (the log on stderr, read by
// installers, supervisors and tests). IDs, counts and times only.
import Drivers
import Protocol

enum KeysStartupReport {
    static func print(clock: AgentClock, sync: KeysRunOptions.ClockSync, simulate: Bool, keys: KeyService, log: AgentLog) {
        let sample = clock.now()
        let source: String
        switch sync {
        case .kernel: source = "system clock " + ((try? KernelClockStatus.read())?.description ?? "status unknown")
        case .yes: source = "system clock assumed synchronised (--clock-sync yes)"
        case .no: source = "system clock assumed not synchronised (--clock-sync no)"
        }
        let mark = clock.trustedMark.map { "trusted-time mark \(ISO8601.format($0))" } ?? "no trusted-time mark yet"
        log.startup("carkey-agent: clock \(sample.wallClockTrusted ? "trusted" : "not trusted") (\(source); \(mark))"
                    + (sample.wallClockTrusted ? "" : untrustedConsequence(sync: sync, simulate: simulate)))

        let keychain = keys.keychain.snapshot
        let listing = keychain.listing
        let shared = listing.filter { !$0.record.revoked && $0.record.role == .shared }.count
        let revoked = listing.filter { $0.record.revoked }.count
        log.startup("carkey-agent: keychain \(keychain.activeKeyCount) of \(keychain.capacity) slots in use "
                    + "(\(keychain.ownerCount) owner, \(shared) shared), \(revoked) revoked, "
                    + "\(keychain.revocationCount) revocation(s), \(keys.shareCount) share certificate(s)")
        if keychain.ownerCount == 0 {
            log.startup("carkey-agent: no owner key: open the pairing window (carkey-agent pair) to enroll the first owner")
        }
        for record in keys.skipped {
            log.startup("carkey-agent: keychain record NOT USED: \(record)")
        }
    }

    /// What an untrusted clock refuses and what to do, so the first refused share or remote
    /// command is no surprise.
    static func untrustedConsequence(sync: KeysRunOptions.ClockSync, simulate: Bool) -> String {
        ": time-limited shares, remote commands and signed configuration are refused (clockNotTrusted) until NTP synchronises "
            + "the clock or an owner's phone anchors it" + (simulate && sync != .yes ? "; a simulated car trusts this machine's clock with --clock-sync yes" : "")
    }
}

// One line per attack in the attack suite (`make attack`, and `make test` at small budgets):
// what the attacker tried, how the enrolled owner fared meanwhile, and whether the car did
// anything it must not. Lines go to stdout ("attack-result: {json}") and, when
// CARKEY_ATTACK_REPORT names a file, are appended there so scripts/attack-table.sh can print
// the table after `swift test` (which holds a test's output until the test ends).
#if canImport(Glibc)
import Glibc
#endif
import Drivers

public struct AttackResult: Sendable, Equatable {
    /// "area.what", e.g. "link.silent-connections".
    public var attack: String
    /// Attacker actions: frames, connections, messages, files.
    public var tries: Int
    /// Owner session attempts during the attack (0 when the attack has no phone probe).
    public var ownerAttempts: Int
    /// Of those, sessions that succeeded within the probe's deadline.
    public var ownerSuccesses: Int
    /// Actions the car performed for no authorised key (must be 0).
    public var unauthorised: Int
    /// Agent exits or restarts nobody asked for (must be 0).
    public var crashes: Int
    /// A short free-text figure worth keeping (RSS growth, drops counted, exit status).
    public var note: String

    public init(attack: String, tries: Int, ownerAttempts: Int = 0, ownerSuccesses: Int = 0,
                unauthorised: Int = 0, crashes: Int = 0, note: String = "") {
        self.attack = attack
        self.tries = tries
        self.ownerAttempts = ownerAttempts
        self.ownerSuccesses = ownerSuccesses
        self.unauthorised = unauthorised
        self.crashes = crashes
        self.note = note
    }

    /// Owner success in percent, nil without a probe.
    public var ownerSuccessPercent: Double? {
        ownerAttempts > 0 ? Double(ownerSuccesses) * 100 / Double(ownerAttempts) : nil
    }

    /// One JSON object on one line (keys fixed, note escaped).
    public var jsonLine: String {
        "{\"attack\":\(JSONText.quote(attack)),\"tries\":\(tries),\"owner_attempts\":\(ownerAttempts),"
            + "\"owner_successes\":\(ownerSuccesses),\"unauthorised\":\(unauthorised),"
            + "\"crashes\":\(crashes),\"note\":\(JSONText.quote(note))}"
    }
}

public enum AttackReport {
    /// Budget multiplier: 1 in `make test` (each attack a few seconds to a minute), larger in
    /// `make attack` (CARKEY_ATTACK_SCALE, 10 there).
    public static var scale: Int {
        guard let raw = getenv("CARKEY_ATTACK_SCALE"), let value = Int(String(cString: raw)), value > 0 else { return 1 }
        return min(value, 1000)
    }

    /// Prints the result and appends it to $CARKEY_ATTACK_REPORT when set.
    public static func emit(_ result: AttackResult) {
        let line = "attack-result: " + result.jsonLine + "\n"
        // Straight to descriptor 1: print's buffer may not be flushed before a test crashes.
        _ = Array(line.utf8).withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        guard let raw = getenv("CARKEY_ATTACK_REPORT") else { return }
        let record = result.jsonLine + "\n"
        let fd = open(raw, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        // One write(2) per line with O_APPEND: lines from parallel test processes never interleave.
        _ = Array(record.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}

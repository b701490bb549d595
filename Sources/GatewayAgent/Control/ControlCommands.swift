// The commands behind the control socket (and, next, the serial console): each returns lines,
// never prints. Transports parse nothing but the line; everything else happens here, on the
// agent's loop thread.
import Drivers
import Protocol

final class ControlCommands {
    private struct Entry: Sendable {
        let name: String
        let summary: String
        let run: @Sendable (ControlCommands, [String]) -> ControlResponse
        /// Whether words may follow the name (only `sim`).
        var takesArguments = false
    }

    private static let table: [Entry] = [
        Entry(name: "help", summary: "list the commands", run: { commands, _ in commands.help() }),
        Entry(name: "status", summary: "vehicle, clock, keys, pairing window, sessions, vehicle state", run: { commands, _ in commands.status() }),
        Entry(name: "pair", summary: "open the pairing window; prints the one-time code", run: { commands, _ in commands.pair() }),
        Entry(name: "pair-cancel", summary: "close the pairing window", run: { commands, _ in commands.cancelPairing() }),
        Entry(name: "stats", summary: "syncs, uptime, events appended, outbox depth (name value lines)",
              run: { commands, _ in commands.stats.map { .ok($0.lines) } ?? .failure("stats are not available") }),
        Entry(name: "sim", summary: "the simulated world, as the console's sim command (only with --simulate)",
              run: { commands, words in commands.simulate(words) }, takesArguments: true),
        Entry(name: "checkpoint", summary: "sign an audit checkpoint of the chain's head now and queue it for vehicles/{id}/audit",
              run: { commands, _ in commands.checkpoint.map { $0() } ?? .failure("checkpoints are not available") }),
        Entry(name: "conformance", summary: "the last phone links' checklists (run --conformance); 'conformance json': JSON lines",
              run: { commands, words in commands.conformanceReport(words) }, takesArguments: true),
    ]

    private let car: CarService
    private let keys: KeyService
    private let clock: AgentClock
    private let vehicleID: VehicleID
    /// When the window opened here closes (monotonic), for `status`.
    private var pairingExpiresAtMillis: UInt64?
    /// The `stats` command's source (set by the agent's start-up).
    var stats: AgentStats?
    /// The console's `sim` group (nil without --simulate): scripts and tests move the simulated
    /// world (doors, the phone's distance, attackers) through the control socket.
    var simulation: ((_ words: [String]) -> [String])?
    /// Writes a checkpoint now (set by the agent's start-up; docs/cloud.md "Checkpoint now").
    var checkpoint: (() -> ControlResponse)?
    /// The conformance report (nil unless the agent runs with --conformance).
    var conformance: ConformanceMonitor?

    init(car: CarService, keys: KeyService, clock: AgentClock, vehicleID: VehicleID) {
        self.car = car
        self.keys = keys
        self.clock = clock
        self.vehicleID = vehicleID
    }

    /// Runs one request line.
    func execute(_ line: String) -> ControlResponse {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let name = words.first else { return .failure("empty command (try help)") }
        guard let entry = Self.table.first(where: { $0.name == name }) else {
            return .failure("unknown command '\(Self.printable(name))' (try help)")
        }
        guard words.count == 1 || entry.takesArguments else { return .failure("'\(name)' takes no arguments") }
        return entry.run(self, Array(words.dropFirst()))
    }

    func help() -> ControlResponse {
        .ok(Self.table.map { "command \($0.name) \($0.summary)" })
    }

    /// "code 123456 expires-in 60", or an error when the keychain is full.
    func pair() -> ControlResponse {
        switch openPairingWindow() {
        case .success(let opened): return .ok(["code \(opened.code.text) expires-in \(opened.expiresInSeconds)"])
        case .failure(let refusal): return .failure(refusal.description)
        }
    }

    /// `sim WORDS`: the console's answer lines; a console error line becomes the failure reason.
    func simulate(_ words: [String]) -> ControlResponse {
        guard let simulation else { return .failure("sim: the agent does not run with --simulate") }
        let lines = simulation(["sim"] + words)
        if let error = lines.first(where: { $0.hasPrefix("error: ") }) { return .failure(String(error.dropFirst(7))) }
        return .ok(lines)
    }

    /// `conformance` (text) or `conformance json` (one JSON object a line).
    func conformanceReport(_ words: [String]) -> ControlResponse {
        guard let conformance else { return .failure("conformance mode is off (run the agent with --conformance)") }
        switch words {
        case []: return .ok(conformance.textLines(nowMillis: clock.monotonicMillis))
        case ["json"]: return .ok(conformance.jsonLines(nowMillis: clock.monotonicMillis))
        default: return .failure("usage: conformance [json]")
        }
    }

    // MARK: Shared with the serial console and the pairing button

    /// Opens the pairing window (a free key slot first); the code goes to the caller only.
    func openPairingWindow() -> Result<PairingWindowOpened, PairingRefusal> {
        let (result, nowMillis) = car.withEngine { engine, now in
            let (result, actions) = keys.openPairingWindow(engine: &engine, now: now)
            return ((result, now.monotonicMillis), actions)
        }
        if case .success(let opened) = result { pairingExpiresAtMillis = nowMillis + opened.expiresInSeconds * 1000 }
        return result
    }

    func isPairingWindowOpen() -> Bool {
        car.withEngine { engine, now in (engine.isPairingWindowOpen(now: now), []) }
    }

    /// One line per key, as `carkey-agent keys` prints them (never key material).
    func keyLines() -> [String] {
        KeyListingFormat.text(LoadedKeychain(keychain: keys.keychain.snapshot, skipped: keys.skipped, shareCount: keys.shareCount))
    }

    func cancelPairing() -> ControlResponse {
        let wasOpen = car.withEngine { engine, now in
            (engine.isPairingWindowOpen(now: now), engine.closePairingWindow(now: now))
        }
        pairingExpiresAtMillis = nil
        return .ok(["pairing \(wasOpen ? "cancelled" : "was not open")"])
    }

    func status() -> ControlResponse {
        let (windowOpen, sessions, nowMillis) = car.withEngine { engine, now in
            ((engine.isPairingWindowOpen(now: now), engine.establishedLinks.count, now.monotonicMillis), [])
        }
        let keychain = keys.keychain.snapshot
        let listing = keychain.listing
        let shared = listing.filter { !$0.record.revoked && $0.record.role == .shared }.count
        let revoked = listing.filter { $0.record.revoked }.count
        var pairing = "pairing closed"
        if windowOpen {
            let left = pairingExpiresAtMillis.map { $0 > nowMillis ? ($0 - nowMillis + 999) / 1000 : 0 }
            pairing = "pairing open" + (left.map { " expires-in \($0)" } ?? "")
        }
        return .ok([
            "vehicle \(vehicleID)",
            "clock \(clock.isTrusted ? "trusted" : "not-trusted") mark \(clock.trustedMark.map(ISO8601.format) ?? "none")",
            "keys active \(keychain.activeKeyCount) owners \(keychain.ownerCount) shared \(shared) revoked \(revoked) "
                + "free \(max(0, keychain.capacity - keychain.activeKeyCount)) of \(keychain.capacity)",
            pairing,
            "sessions \(sessions)",
            "state \(car.vehicleState.rawValue) \(car.vehicleState.summary)",
        ])
    }

    /// Echoes at most 32 printable ASCII characters of something a client sent.
    private static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(32).map { (0x20...0x7E).contains($0.value) ? Character($0) : "?" })
    }
}

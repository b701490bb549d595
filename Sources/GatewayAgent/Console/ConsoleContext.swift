// What the console's command groups look at and act on. Filled in at start-up; the hooks are
// set once the parts they reach exist (the cloud link starts after the console is built, and
// pairing is wired by the keys work).
import Drivers
import Protocol

final class ConsoleContext {
    let config: AgentConfig
    let vehicleID: VehicleID
    let cloudOptions: CloudOptions?
    let body: VehicleBody
    let store: CarStore
    let clock: AgentClock
    let log: AgentLog
    /// What the engineer connected to ("/dev/pts/3"); set when the transport opened.
    var endpoint = "none"

    /// The cloud link's snapshot; nil: no cloud link configured.
    var cloudSnapshot: (() -> CloudSnapshot)?
    /// Opens the pairing window and returns the code to show, or why not.
    /// HOOK (keys work, issue #4): set by the start-up code once owner enrollment is wired into
    /// the agent (CarService / ControlCommands); nil until then, and `pair` says so.
    var openPairingWindow: (() -> Result<PairingCode, FaultCode>)?
    /// Whether a pairing window is open now; nil until pairing is wired (see above).
    var isPairingWindowOpen: (() -> Bool)?
    /// One line per enrolled key (ID, role, permissions, validity; never key material).
    var keyLines: (() -> [String])?
    /// The audit log's group-commit counters (commits, rows per commit); nil until wired.
    var auditStats: (() -> AuditCommitStats)?
    /// The phone links open now (transport, address, RSSI); nil until the link server exists.
    var linkSnapshot: (() -> LinkSnapshot)?
    /// The conformance report (`conformance [json]`), answered like the control socket's.
    var conformanceLines: ((_ words: [String]) -> [String])?
    /// "nearest key K: zone unlock, 0.84 m" or nil without a UWB module.
    var proximityLine: (() -> String)?
    /// True while service mode is on (remote commands are refused then, RemoteSettings).
    var serviceModeActive: (() -> Bool)?
    /// Who may sign a service challenge (owner keys with manage, fleet keys), set at start-up.
    var serviceSigners: RemoteSigners?
    /// Console lines dropped because nobody read them (AgentConsole's bounded output).
    var consoleDroppedLines: () -> Int = { 0 }
    /// Writes lines to the console outside an answer (a pulse that ended, a pairing code).
    var notify: ([String]) -> Void = { _ in }

    init(config: AgentConfig, vehicleID: VehicleID, cloudOptions: CloudOptions?, body: VehicleBody, store: CarStore,
         clock: AgentClock, log: AgentLog) {
        self.config = config
        self.vehicleID = vehicleID
        self.cloudOptions = cloudOptions
        self.body = body
        self.store = store
        self.clock = clock
        self.log = log
    }
}

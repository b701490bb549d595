// The serial diagnostics console on the agent loop: the transport's descriptor is polled with
// everything else, and each readable round answers the complete lines (LineConsole, bounded).
//
// A serial device that fails (a USB gadget /dev/ttyGS0 vanishes when the cable is pulled) is
// closed and reopened every few seconds; the agent never stops for its console. A stdin that
// reaches end of file just ends the console. Output never waits: it goes to a bounded queue
// (64 KiB) written when the descriptor is writable, and answer lines that do not fit are
// dropped and counted (shown by `status`, logged once per episode), so a peer that stops
// reading cannot slow a phone session down.
import Drivers

final class AgentConsole: LoopSource {
    static let prompt = "carkey> "
    static let reopenIntervalMillis: UInt64 = 5000
    /// Output queued for a slow reader: several seconds at 115200 baud, many times the longest
    /// answer (`events 50`), and a bound on what a reader that never reads can cost in memory.
    static let outputCapacity = 64 * 1024
    /// Longest input line: `service auth` with the longest signed answer is 279 characters.
    static let maxLineBytes = 384

    private let device: ConsoleDevice
    private let baud: Int
    private let commands: ConsoleCommands
    private let clock: AgentClock
    private let log: AgentLog
    private var transport: ConsoleTransport?
    private var console: LineConsole?
    private var reopenAt: UInt64?
    /// Lines dropped by consoles closed since start (a reopened tty starts a new LineConsole).
    private var droppedBefore = 0

    /// Answer and notice lines dropped because nobody read them, since the agent started.
    var droppedLines: Int { droppedBefore + (console?.droppedLines ?? 0) }

    /// nil for `.none`. A pty or stdio that cannot be set up stops the start-up; a serial
    /// device that is not there yet is retried in the background.
    static func open(_ device: ConsoleDevice, baud: Int, commands: ConsoleCommands, clock: AgentClock, log: AgentLog) throws -> AgentConsole? {
        if case .none = device { return nil }
        let console = AgentConsole(device: device, baud: baud, commands: commands, clock: clock, log: log)
        do throws(SerialError) {
            try console.connect()
        } catch {
            guard case .tty = device else { throw AgentStartFailure(description: "console \(device): \(error)") }
            console.log.warn("console \(device): \(error); retrying every \(Self.reopenIntervalMillis / 1000) s")
            console.reopenAt = clock.monotonicMillis + Self.reopenIntervalMillis
        }
        return console
    }

    private init(device: ConsoleDevice, baud: Int, commands: ConsoleCommands, clock: AgentClock, log: AgentLog) {
        self.device = device
        self.baud = baud
        self.commands = commands
        self.clock = clock
        self.log = log
    }

    /// Where the engineer connects (the pty slave path, the device), for the start-up line.
    var endpoint: String { transport?.endpoint ?? device.description }

    func pollSet() -> [(FileDescriptor, PollEvents)] {
        guard let transport, let console else { return [] }
        // The output is polled for writable only while bytes wait (stdio: a second descriptor).
        guard console.wantsWrite else { return [(transport.input, .readable)] }
        if transport.input == transport.output { return [(transport.input, [.readable, .writable])] }
        return [(transport.input, .readable), (transport.output, .writable)]
    }

    /// Now while typed lines wait to be answered (at most a few per round, see LineConsole).
    func nextDeadline() -> UInt64? {
        if console?.hasCarriedInput == true { return clock.monotonicMillis }
        return reopenAt
    }

    func process(_ ready: [PollEvents], nowMillis now: UInt64) {
        if let at = reopenAt, now >= at { reconnect(now: now) }
        guard let console else { return }
        let readable = ready.first.map { !$0.isDisjoint(with: [.readable, .hangUp, .error]) } ?? false
        let writable = ready.contains { $0.contains(.writable) }
        do throws(SerialError) {
            if writable { try console.flush() }
            if readable || console.hasCarriedInput, try console.poll(timeoutMillis: 0) == .closed {
                lost("closed by the other side", now: now)
                return
            }
        } catch {
            lost("\(error)", now: now)
            return
        }
        noteDrops(console)
    }

    /// One log line per drop episode (from the first drop until the queue empties again).
    private func noteDrops(_ console: LineConsole) {
        guard console.takeDropEpisodeStarted() else { return }
        log.warn("console: output queue full (\(Self.outputCapacity / 1024) KiB), nobody is reading; dropping lines "
                 + "(\(droppedLines) so far, see status)")
    }

    /// Lines outside an answer (a pulse that ended, a pairing code from the button), then the
    /// prompt again. Dropped when no console is connected or nobody reads.
    func notify(_ lines: [String]) {
        guard let console else { return }
        do throws(SerialError) {
            try console.write(lines: lines)
            try console.start()
        } catch {
            log.debug("console: notice dropped: \(error)")
        }
        noteDrops(console)
    }

    func close() {
        droppedBefore += console?.droppedLines ?? 0
        transport?.close()
        transport = nil
        console = nil
    }

    private func connect() throws(SerialError) {
        guard let transport = try ConsoleTransport.open(device, baud: baud) else { return }
        let commands = self.commands
        let console = LineConsole(input: transport.input, output: transport.output, maxLineBytes: Self.maxLineBytes,
                                  echo: transport.interactive,
                                  prompt: transport.interactive ? Self.prompt : nil, outputCapacity: Self.outputCapacity,
                                  echoMask: { ConsoleCommands.masksSecret($0) }, handler: { commands.answer($0) })
        self.transport = transport
        self.console = console
        reopenAt = nil
        do throws(SerialError) {
            try console.start()
        } catch {
            log.debug("console: prompt not written: \(error)")
        }
    }

    private func lost(_ reason: String, now: UInt64) {
        close()
        guard case .tty = device else {
            log.info("console \(device): \(reason); console off")
            return
        }
        log.warn("console \(device): \(reason); reopening every \(Self.reopenIntervalMillis / 1000) s")
        reopenAt = now + Self.reopenIntervalMillis
    }

    private func reconnect(now: UInt64) {
        do throws(SerialError) {
            try connect()
            log.info("console \(device): reopened")
        } catch {
            reopenAt = now + Self.reopenIntervalMillis
            log.debug("console \(device): still unavailable: \(error)")
        }
    }
}

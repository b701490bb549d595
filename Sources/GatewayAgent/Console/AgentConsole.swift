// The serial diagnostics console on the agent loop: the transport's descriptor is polled with
// everything else, and each readable round answers the complete lines (LineConsole, bounded).
//
// A serial device that fails (a USB gadget /dev/ttyGS0 vanishes when the cable is pulled) is
// closed and reopened every few seconds; the agent never stops for its console. A stdin that
// reaches end of file just ends the console. Output to a side that stopped reading is dropped
// after a short timeout rather than stalling the loop.
import Drivers

final class AgentConsole: LoopSource {
    static let prompt = "carkey> "
    static let reopenIntervalMillis: UInt64 = 5000
    /// A console write waits at most this long for room, then the rest of the answer is
    /// dropped. Writes happen on the loop thread, so this is also the longest a slow line can
    /// hold up phones: 1 s moves about 11 KB at 115200 baud (plus the 4 KB kernel buffer),
    /// enough for the longest answer (`events 50`); a side that stopped reading costs it once
    /// per answer. Anything longer belongs in `carkey-agent events` on the board.
    static let writeTimeoutMillis: UInt64 = 1000

    private let device: ConsoleDevice
    private let baud: Int
    private let commands: ConsoleCommands
    private let clock: AgentClock
    private let log: AgentLog
    private var transport: ConsoleTransport?
    private var console: LineConsole?
    private var reopenAt: UInt64?

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
        guard let transport, console != nil else { return [] }
        return [(transport.input, .readable)]
    }

    func nextDeadline() -> UInt64? { reopenAt }

    func process(_ ready: [PollEvents], nowMillis now: UInt64) {
        if let at = reopenAt, now >= at { reconnect(now: now) }
        guard let console, let events = ready.first, !events.isEmpty else { return }
        do throws(SerialError) {
            if try console.poll(timeoutMillis: 0) == .closed { lost("closed by the other side", now: now) }
        } catch {
            if case .outputStalled = error {
                log.debug("console: output dropped, nobody is reading")
                return
            }
            lost("\(error)", now: now)
        }
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
    }

    func close() {
        transport?.close()
        transport = nil
        console = nil
    }

    private func connect() throws(SerialError) {
        guard let transport = try ConsoleTransport.open(device, baud: baud) else { return }
        let commands = self.commands
        let console = LineConsole(input: transport.input, output: transport.output, echo: transport.interactive,
                                  prompt: transport.interactive ? Self.prompt : nil, writeTimeoutMillis: Self.writeTimeoutMillis,
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

// A pseudo-terminal rig for console tests: the test types into the master (the engineer's end
// of the cable) and the console runs on the slave, opened by path like a real UART.
import XCTest
@testable import Drivers

final class SerialRig {
    let pty: PseudoTerminal
    let port: SerialPort
    let console: LineConsole
    let commands = LockedBox<[String]>([])

    /// Answers like a tiny command set: enough to see lines go in and answers come out.
    init(echo: Bool = false, prompt: String? = nil, maxLineBytes: Int = 256, outputCapacity: Int = BoundedOutput.defaultCapacity,
         answer: (@Sendable (String) -> [String])? = nil) throws {
        pty = try PseudoTerminal.open()
        port = try SerialPort.open(path: pty.slavePath)
        let commands = commands
        console = LineConsole(input: port.descriptor, output: port.descriptor, maxLineBytes: maxLineBytes, echo: echo,
                              prompt: prompt, outputCapacity: outputCapacity) { line in
            commands.update { $0.append(line) }
            if let answer { return answer(line) }
            switch line {
            case "version": return ["carkey-agent test"]
            case "status": return ["locks: locked", "doors: closed"]
            default: return ["error: unknown command \"\(line)\" (try help)"]
            }
        }
    }

    deinit {
        port.close()
        pty.close()
    }

    func type(_ text: String) throws { try type(Array(text.utf8)) }

    func type(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count { offset += try pty.master.writeSome(bytes[offset...]) }
    }

    /// Lets the console handle what was typed (data is already there: poll returns at once).
    func step() throws -> LineConsole.Status { try console.poll(timeoutMillis: 1000) }

    /// Reads from the master until `expected` has arrived, failing after a bounded real wait.
    func read(until expected: String, timeoutMillis: UInt64 = 2000) throws -> String {
        let clock = SystemClock()
        let deadline = clock.nowMillis() + timeoutMillis
        var received: [UInt8] = []
        while !String(decoding: received, as: UTF8.self).contains(expected) {
            let now = clock.nowMillis()
            guard now < deadline else { break }
            _ = try pty.master.poll(events: Int16(POLLIN), timeoutMillis: Int32(deadline - now))
            received += try pty.master.readAvailable(upTo: 4096) ?? []
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Everything the master can read right now (after a short bounded wait for stragglers).
    func drain(waitMillis: Int32 = 50) throws -> String {
        var received: [UInt8] = []
        while try pty.master.poll(events: Int16(POLLIN), timeoutMillis: waitMillis) & Int16(POLLIN) != 0 {
            guard let chunk = try pty.master.readAvailable(upTo: 4096), !chunk.isEmpty else { break }
            received += chunk
        }
        return String(decoding: received, as: UTF8.self)
    }
}

#if canImport(Glibc)
import Glibc
#endif

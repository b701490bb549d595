// The libgpiod backend against a real kernel: gpio-sim chips in the GPIO lane's VM
// (scripts/gpio-vm). Skipped unless CARKEY_GPIO_KERNEL names the gpio-sim configfs device the
// lane made (two banks, carkey-sim-0 and carkey-sim-1, 8 lines each). Each test uses its own
// lines, so the order does not matter. What the backend did is checked from the kernel's side:
// gpio-sim's sysfs `value` (the level on the line) and `pull` (what the outside world pulls it
// to, or the bias the consumer asked for), and debugfs/gpio (direction, consumer, active-low).
#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import Drivers

final class GPIOKernelTests: XCTestCase {
    private var sim: GPIOSimChips!

    override func setUpWithError() throws {
        guard let device = getenv("CARKEY_GPIO_KERNEL").map({ String(cString: $0) }) else {
            throw XCTSkip("runs in the GPIO lane (scripts/gpio-vm/run-lane.sh; CARKEY_GPIO_KERNEL unset)")
        }
        sim = try GPIOSimChips(configfsDevice: device)
    }

    func testOutputStartsInactiveWithItsDirectionAndDrives() throws {
        let chip = sim.banks[0]
        try chip.pull(0, up: true)   // an input pulled high before: the request must drive it low
        let backend = LibgpiodBackend()
        let line = try backend.requestOutput(GPIOLineConfig(chip: chip.label, line: 0), role: "lock")
        XCTAssertEqual(try chip.value(0), 0)
        XCTAssertEqual(try chip.debugLine(consumer: "carkey:lock")?.direction, "out")
        try line.setActive(true)
        XCTAssertEqual(try chip.value(0), 1)
        XCTAssertTrue(try line.isActive())
        try line.setActive(false)
        XCTAssertEqual(try chip.value(0), 0)
        XCTAssertFalse(try line.isActive())
    }

    func testActiveLowOutputRestsHighAndDrivesLow() throws {
        let chip = sim.banks[0]
        try chip.pull(1, up: false)
        let backend = LibgpiodBackend()
        let line = try backend.requestOutput(GPIOLineConfig(chip: chip.label, line: 1, activeLow: true), role: "unlock")
        XCTAssertEqual(try chip.value(1), 1, "inactive is the high level on an active-low line")
        XCTAssertEqual(try chip.debugLine(consumer: "carkey:unlock")?.activeLow, true)
        try line.setActive(true)
        XCTAssertEqual(try chip.value(1), 0)
        XCTAssertTrue(try line.isActive())
    }

    func testPulseIsSeenOnTheLine() throws {
        let chip = sim.banks[0]
        let backend = LibgpiodBackend()
        let line = try backend.requestOutput(GPIOLineConfig(chip: chip.label, line: 2), role: "trunkRelease")
        // The level holds for the whole pulse (sampled every 10 ms) and drops at its end.
        try line.setActive(true)
        var held: [Int] = []
        for _ in 0..<15 { held.append(try chip.value(2)); usleep(10_000) }
        try line.setActive(false)
        XCTAssertEqual(held, Array(repeating: 1, count: 15))
        XCTAssertEqual(try chip.value(2), 0, "back inactive after the pulse")
    }

    func testInputReportsEdgesFromThePull() throws {
        let chip = sim.banks[0]
        try chip.pull(4, up: false)
        let backend = LibgpiodBackend()
        let line = try backend.requestInput(GPIOLineConfig(chip: chip.label, line: 4), role: "doorOpen")
        let fd = try XCTUnwrap(line.edgeDescriptor, "gpio-sim raises edge interrupts: events expected")
        XCTAssertEqual(try chip.debugLine(consumer: "carkey:doorOpen")?.direction, "in")
        XCTAssertFalse(try line.isActive())
        XCTAssertEqual(try line.drainEdges(), 0, "non-blocking: nothing queued, no wait")
        try chip.pull(4, up: true)
        XCTAssertTrue(Self.readable(fd, timeoutMillis: Self.edgeWaitMillis), "rising edge")
        XCTAssertGreaterThanOrEqual(try line.drainEdges(), 1)
        XCTAssertFalse(Self.readable(fd, timeoutMillis: 0), "drained")
        XCTAssertTrue(try line.isActive())
        try chip.pull(4, up: false)
        XCTAssertTrue(Self.readable(fd, timeoutMillis: Self.edgeWaitMillis), "falling edge")
        XCTAssertEqual(try line.drainEdges(), 1)
        XCTAssertFalse(try line.isActive())
    }

    func testActiveLowInputIsActiveWhenPulledLow() throws {
        let chip = sim.banks[0]
        try chip.pull(5, up: true)
        let backend = LibgpiodBackend()
        let line = try backend.requestInput(GPIOLineConfig(chip: chip.label, line: 5, activeLow: true), role: "trunkOpen")
        XCTAssertFalse(try line.isActive())
        try chip.pull(5, up: false)
        let fd = try XCTUnwrap(line.edgeDescriptor)
        XCTAssertTrue(Self.readable(fd, timeoutMillis: Self.edgeWaitMillis))
        XCTAssertGreaterThanOrEqual(try line.drainEdges(), 1)
        XCTAssertTrue(try line.isActive())
    }

    func testBiasReachesTheChip() throws {
        let chip = sim.banks[0]
        let backend = LibgpiodBackend()
        try chip.pull(6, up: false)
        let up = try backend.requestInput(GPIOLineConfig(chip: chip.label, line: 6, bias: .pullUp), role: "pairingButton")
        XCTAssertEqual(try chip.pullSetting(6), "pull-up")
        XCTAssertTrue(try up.isActive())
        up.release()
        let down = try backend.requestInput(GPIOLineConfig(chip: chip.label, line: 6, bias: .pullDown), role: "pairingButton")
        XCTAssertEqual(try chip.pullSetting(6), "pull-down")
        XCTAssertFalse(try down.isActive())
    }

    func testBusyLineNamesTheOtherHolder() throws {
        let chip = sim.banks[0]
        let holder = LibgpiodBackend(), second = LibgpiodBackend()
        let held = try holder.requestOutput(GPIOLineConfig(chip: chip.label, line: 3), role: "feedbackLight")
        for request in [{ _ = try second.requestOutput(GPIOLineConfig(chip: chip.label, line: 3), role: "lock") },
                        { _ = try second.requestInput(GPIOLineConfig(chip: chip.label, line: 3), role: "lock") }] {
            XCTAssertThrowsError(try request()) {
                XCTAssertEqual($0 as? GPIOError, .lineBusy(GPIOLineReference(role: "lock", chip: chip.label, line: 3), consumer: "carkey:feedbackLight"))
            }
        }
        held.release()
        XCTAssertNoThrow(try second.requestOutput(GPIOLineConfig(chip: chip.label, line: 3), role: "lock"))
    }

    func testChipByLabelNameAndPathIsTheSameChip() throws {
        let other = sim.banks[0], chip = sim.banks[1]
        let backend = LibgpiodBackend()
        for (index, address) in [chip.label, chip.name, "/dev/" + chip.name].enumerated() {
            let line = try backend.requestOutput(GPIOLineConfig(chip: address, line: 7), role: "lock\(index)")
            try line.setActive(true)
            XCTAssertEqual(try chip.value(7), 1, address)
            XCTAssertEqual(try other.value(7), 0, "\(address) must not reach \(other.label)")
            line.release()
            XCTAssertEqual(try chip.value(7), 0, "released: back to the pull")
        }
    }

    func testMissingChipsAndLinesAreNamed() throws {
        let backend = LibgpiodBackend()
        let cases: [(String, GPIOChipAddress)] = [("carkey-sim-missing", .label("carkey-sim-missing")),
                                                  ("gpiochip99", .name("gpiochip99")), ("/dev/gpiochip99", .path("/dev/gpiochip99")),
                                                  ("/dev/null", .path("/dev/null"))]
        for (text, address) in cases {
            XCTAssertThrowsError(try backend.requestOutput(GPIOLineConfig(chip: text, line: 0), role: "lock")) {
                XCTAssertEqual($0 as? GPIOError, .chipNotFound(chip: address, role: "lock"))
            }
        }
        XCTAssertThrowsError(try backend.requestInput(GPIOLineConfig(chip: sim.banks[1].label, line: 8), role: "doorOpen")) {
            XCTAssertEqual($0 as? GPIOError, .lineOutOfRange(GPIOLineReference(role: "doorOpen", chip: sim.banks[1].label, line: 8), lineCount: 8))
        }
    }

    func testReleaseAndCloseGiveLinesBack() throws {
        let chip = sim.banks[1]
        let backend = LibgpiodBackend()
        let first = try backend.requestOutput(GPIOLineConfig(chip: chip.label, line: 0), role: "lock")
        _ = try backend.requestInput(GPIOLineConfig(chip: chip.label, line: 1), role: "doorOpen")
        XCTAssertNotNil(try chip.debugLine(consumer: "carkey:lock"))
        first.release()
        XCTAssertNil(try chip.debugLine(consumer: "carkey:lock"))
        XCTAssertThrowsError(try first.setActive(true)) {
            XCTAssertEqual($0 as? GPIOError, .released(GPIOLineReference(role: "lock", chip: chip.label, line: 0)))
        }
        XCTAssertNotNil(try chip.debugLine(consumer: "carkey:doorOpen"))
        backend.close()
        XCTAssertNil(try chip.debugLine(consumer: "carkey:doorOpen"))
    }

    func testLinkedLibraryMatchesTheCompiledAPI() {
        XCTAssertTrue(LibgpiodBackend.libraryVersion.hasPrefix("\(LibgpiodBackend.apiVersion)."),
                      "\(LibgpiodBackend.libraryVersion) for API \(LibgpiodBackend.apiVersion)")
        print("gpio-kernel: libgpiod \(LibgpiodBackend.libraryVersion) (API \(LibgpiodBackend.apiVersion))")
    }

    /// The guest runs under TCG on a loaded CI machine: an edge arrives in microseconds, but the
    /// bound is generous so that a slow guest is not taken for a missing interrupt.
    private static let edgeWaitMillis: Int32 = 10_000

    private static func readable(_ fd: FileDescriptor, timeoutMillis: Int32) -> Bool {
        var entry = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, timeoutMillis) == 1 && entry.revents & Int16(POLLIN) != 0
    }
}

/// The lane's gpio-sim chips, read from the configfs device it made, with their sysfs side.
struct GPIOSimChips {
    struct Bank {
        let label: String
        let name: String
        /// /sys/devices/platform/<device>/<chip>: holds sim_gpioN/{value,pull}.
        let sysfs: String

        func value(_ line: Int) throws -> Int {
            guard let value = Int(try GPIOSimChips.read("\(sysfs)/sim_gpio\(line)/value")) else { throw GPIOSimError("value of line \(line)") }
            return value
        }

        func pullSetting(_ line: Int) throws -> String { try GPIOSimChips.read("\(sysfs)/sim_gpio\(line)/pull") }

        /// What the outside world does to the line: pulls it up or down.
        func pull(_ line: Int, up: Bool) throws {
            try GPIOSimChips.write(up ? "pull-up" : "pull-down", to: "\(sysfs)/sim_gpio\(line)/pull")
        }

        /// The kernel's own view of a requested line in debugfs/gpio, found by its consumer:
        /// ` gpio-512 (name|consumer) out lo ACTIVE LOW`.
        func debugLine(consumer: String) throws -> (direction: String, high: Bool, activeLow: Bool)? {
            let text = try GPIOSimChips.read("/sys/kernel/debug/gpio")
            var inChip = false
            for row in text.split(separator: "\n") {
                if !row.hasPrefix(" ") { inChip = row.hasPrefix("\(name):"); continue }
                guard inChip, let bar = row.firstIndex(of: "|"), let close = row.firstIndex(of: ")") else { continue }
                guard row[row.index(after: bar)..<close].gpioTrimmed(" ") == consumer else { continue }
                let fields = row[row.index(after: close)...].split(separator: " ")
                guard fields.count >= 2 else { throw GPIOSimError("debugfs row \(row)") }
                return (String(fields[0]), fields[1] == "hi", row.hasSuffix("ACTIVE LOW"))
            }
            return nil
        }
    }

    let banks: [Bank]

    init(configfsDevice device: String) throws {
        let platform = try Self.read(device + "/dev_name")
        banks = try (0..<2).map { index in
            let name = try Self.read("\(device)/bank\(index)/chip_name")
            return Bank(label: try Self.read("\(device)/bank\(index)/label"), name: name, sysfs: "/sys/devices/platform/\(platform)/\(name)")
        }
    }

    /// A sysfs or configfs attribute without its trailing newline (they are one short line).
    static func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw GPIOSimError("open \(path): errno \(errno)") }
        defer { close(fd) }
        var bytes = [UInt8](), chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = Glibc.read(fd, &chunk, chunk.count)
            guard n >= 0 else { throw GPIOSimError("read \(path): errno \(errno)") }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self).gpioTrimmed("\n")
    }

    static func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { throw GPIOSimError("open \(path): errno \(errno)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw GPIOSimError("write \(text) to \(path): errno \(errno)") }
    }
}

struct GPIOSimError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

private extension StringProtocol {
    func gpioTrimmed(_ set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}

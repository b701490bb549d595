// The systemd notify protocol (sd_notify(3), without libsystemd): newline-separated
// assignments in one datagram to the AF_UNIX socket named by $NOTIFY_SOCKET ("@name" is the
// abstract namespace). READY=1 once the agent serves phones, STATUS= for `systemctl status`,
// WATCHDOG=1 at half the interval systemd asks for in $WATCHDOG_USEC, STOPPING=1 on the way out.
// Without $NOTIFY_SOCKET (not started by systemd with Type=notify) every call does nothing.
#if canImport(Glibc)
import Glibc
// As in UnixSocket.swift: in a whole-module build the socket constants may belong to CBluetooth.
import CBluetooth
#endif

public final class ServiceNotifier {
    /// Assignments longer than this are cut: a status line is for people, not a log.
    public static let maxStatusBytes = 200

    private let address: [UInt8]?
    private let descriptor: FileDescriptor?
    /// How often to send WATCHDOG=1 (half of $WATCHDOG_USEC), nil when systemd wants none.
    public let watchdogIntervalMillis: UInt64?
    private var lastWatchdogMillis: UInt64?
    /// The last send error, kept for the console (a notify failure must never stop the car).
    public private(set) var lastError: Errno?

    /// From the process environment (`NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`).
    public convenience init() {
        self.init(environment: { name in getenv(name).map { String(cString: $0) } }, pid: getpid())
    }

    public init(environment: (String) -> String?, pid: pid_t) {
        let path = environment("NOTIFY_SOCKET").map { Array($0.utf8) } ?? []
        if (2...107).contains(path.count), path.first == UInt8(ascii: "/") || path.first == UInt8(ascii: "@") {
            address = path
            let raw = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            descriptor = raw >= 0 ? FileDescriptor(rawValue: raw) : nil
        } else {
            address = nil
            descriptor = nil
        }
        // WATCHDOG_PID names the process the watchdog is for; another PID means a parent's.
        let forUs = environment("WATCHDOG_PID").map { Int32($0) == pid } ?? true
        if forUs, let micros = environment("WATCHDOG_USEC").flatMap(UInt64.init), micros >= 2000 {
            watchdogIntervalMillis = micros / 2000
        } else {
            watchdogIntervalMillis = nil
        }
    }

    deinit { descriptor?.close() }

    public var isActive: Bool { descriptor != nil }

    public func ready(status: String) { send("READY=1\nSTATUS=" + Self.clean(status)) }

    public func status(_ text: String) { send("STATUS=" + Self.clean(text)) }

    public func stopping() { send("STOPPING=1") }

    /// Call from the loop's tick: pings when half the watchdog interval has passed.
    public func watchdog(nowMillis: UInt64) {
        guard let interval = watchdogIntervalMillis else { return }
        if let last = lastWatchdogMillis, nowMillis < last + interval { return }
        lastWatchdogMillis = nowMillis
        send("WATCHDOG=1")
    }

    /// One line of printable ASCII, at most `maxStatusBytes` (a newline would start a new
    /// assignment and could forge READY or WATCHDOG).
    public static func clean(_ text: String) -> String {
        String(decoding: text.utf8.prefix(maxStatusBytes).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    private func send(_ message: String) {
        guard let descriptor, var path = address else { return }
        var target = sockaddr_un()
        target.sun_family = sa_family_t(AF_UNIX)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }   // abstract: a leading NUL, no terminator
        withUnsafeMutableBytes(of: &target.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor.rawValue, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, length)
            }
        }
        lastError = sent == bytes.count ? nil : Errno.current("notify \(String(decoding: address ?? [], as: UTF8.self))")
    }
}

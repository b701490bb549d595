// Whether the kernel believes its wall clock: adjtimex(2) in read-only mode (modes = 0 changes
// nothing and needs no privilege). NTP daemons (systemd-timesyncd, chrony, ntpd) clear
// STA_UNSYNC once they discipline the clock; the kernel sets it again, and answers TIME_ERROR,
// when no update arrived for long enough that maxerror reached 16 s.
#if canImport(Glibc)
import Glibc
#endif
import CShims

public struct KernelClockStatus: Sendable, Equatable, CustomStringConvertible {
    /// Largest estimated error still called synchronised. The kernel itself gives up at 16 s;
    /// anything above a few seconds means the NTP daemon has not spoken for a long time.
    public static let maxSaneErrorMicros: Int64 = 5_000_000

    /// adjtimex's answer: TIME_OK, TIME_INS, ..., or TIME_ERROR (5) for "unsynchronised".
    public let state: Int32
    /// The STA_* status bits.
    public let statusBits: Int32
    /// Maximum error estimate in microseconds.
    public let maxErrorMicros: Int64

    public init(state: Int32, statusBits: Int32, maxErrorMicros: Int64) {
        self.state = state
        self.statusBits = statusBits
        self.maxErrorMicros = maxErrorMicros
    }

    /// Synchronised: not TIME_ERROR, STA_UNSYNC clear, and the error estimate sane.
    public var isSynchronized: Bool {
        state != TIME_ERROR && statusBits & Int32(STA_UNSYNC) == 0 && (0...Self.maxSaneErrorMicros).contains(maxErrorMicros)
    }

    /// Reads the kernel clock status; changes nothing.
    public static func read() throws(Errno) -> KernelClockStatus {
        var query = timex()
        query.modes = 0
        let state = adjtimex(&query)
        guard state >= 0 else { throw Errno.current("adjtimex") }
        return KernelClockStatus(state: state, statusBits: Int32(query.status), maxErrorMicros: Int64(query.maxerror))
    }

    public var description: String {
        isSynchronized ? "synchronised (max error \(maxErrorMicros / 1000) ms)"
                       : "not synchronised (adjtimex state \(state), STA_UNSYNC \(statusBits & Int32(STA_UNSYNC) != 0 ? "set" : "clear"))"
    }
}

// Bring-up waits (the reset settling, the RCINIT/CP_LOCK/RX_CAL polls) go through this seam so
// the simulator can pass virtual time instead of sleeping. Operation never waits: it is driven
// by interrupts.
#if canImport(Glibc)
import Glibc
#endif

public protocol UWBDelay: AnyObject {
    /// Lets `micros` microseconds pass.
    func delay(micros: UInt32)
}

/// nanosleep(2), resumed after a signal so a settling time is never cut short.
public final class SleepingUWBDelay: UWBDelay {
    public init() {}

    public func delay(micros: UInt32) {
        var request = timespec(tv_sec: Int(micros / 1_000_000), tv_nsec: Int(micros % 1_000_000) * 1000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

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

/// A monotonic sleep (SystemClock.sleep), resumed after a signal so a settling time is never cut short.
public final class SleepingUWBDelay: UWBDelay {
    public init() {}

    public func delay(micros: UInt32) {
        SystemClock.sleep(nanoseconds: UInt64(micros) * 1000)
    }
}

// pipe(2) with its flags set in one call: the wake pipes (the actuation worker's, the signal
// pipe) and anything else that needs a descriptor pair.
#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// A new pipe. `nonBlocking` sets O_NONBLOCK on both ends (a wake-up writer never blocks on
    /// a full pipe, which already holds a pending wake-up; a drain never waits on an empty one).
    /// On failure nothing stays open.
    public static func pipe(nonBlocking: Bool, closeOnExec: Bool = true) throws(Errno) -> (readEnd: FileDescriptor, writeEnd: FileDescriptor) {
        var ends: [CInt] = [-1, -1]
        _ = try retryOnInterrupt("pipe") { ends.withUnsafeMutableBufferPointer { Glibc.pipe($0.baseAddress!) } }
        let pair = (readEnd: FileDescriptor(rawValue: ends[0]), writeEnd: FileDescriptor(rawValue: ends[1]))
        do throws(Errno) {
            for end in [pair.readEnd, pair.writeEnd] {
                if nonBlocking { try end.setNonBlocking(true) }
                if closeOnExec { try end.setCloseOnExec() }
            }
        } catch {
            pair.readEnd.close()
            pair.writeEnd.close()
            throw error
        }
        return pair
    }
}

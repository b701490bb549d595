// The real SPI backend: a Linux spidev node (/dev/spidevB.C), mode 0, 8 bits per word, the
// clock set per transaction. Transfers go through CShims because SPI_IOC_MESSAGE is a macro.
#if canImport(Glibc)
import Glibc
#endif
import CShims

public final class SpidevDevice: SPIDevice {
    public let path: String
    public private(set) var clockHertz: UInt32
    private var descriptor: FileDescriptor?

    /// `/dev/spidev<bus>.<chipSelect>`.
    public static func path(bus: Int, chipSelect: Int) -> String { "/dev/spidev\(bus).\(chipSelect)" }

    /// Opens and configures the node; every start-up failure is an `SPIError` naming its fix.
    public init(path: String, clockHertz: UInt32 = 2_000_000) throws(SPIError) {
        self.path = path
        self.clockHertz = clockHertz
        let fd: CInt
        do {
            fd = try retryOnInterrupt("open \(path)") { ock_open(path, O_RDWR | O_CLOEXEC, 0) }
        } catch {
            throw SPIError.opening(path, error)
        }
        let opened = FileDescriptor(rawValue: fd)
        do {
            try Self.apply(fd, "SPI mode 0 (SPI_IOC_WR_MODE)") { ock_spi_set_mode(fd, 0) }
            try Self.apply(fd, "8 bits per word (SPI_IOC_WR_BITS_PER_WORD)") { ock_spi_set_bits_per_word(fd, 8) }
            try Self.apply(fd, "a clock of \(clockHertz) Hz (SPI_IOC_WR_MAX_SPEED_HZ)") { ock_spi_set_max_speed_hz(fd, clockHertz) }
        } catch {
            opened.close()
            throw .settingRefused(path: path, setting: error.operation, errno: error)
        }
        descriptor = opened
    }

    deinit { descriptor?.close() }

    public func close() {
        descriptor?.close()
        descriptor = nil
    }

    public func setClock(hertz: UInt32) throws(SPIError) {
        guard let fd = descriptor?.rawValue else { throw .closed(path: path) }
        do {
            try Self.apply(fd, "a clock of \(hertz) Hz (SPI_IOC_WR_MAX_SPEED_HZ)") { ock_spi_set_max_speed_hz(fd, hertz) }
        } catch {
            throw .settingRefused(path: path, setting: error.operation, errno: error)
        }
        clockHertz = hertz
    }

    public func transfer(write: [UInt8], readCount: Int) throws(SPIError) -> [UInt8] {
        guard let fd = descriptor?.rawValue else { throw .closed(path: path) }
        var received = [UInt8](repeating: 0, count: readCount)
        let speed = clockHertz
        // The error is carried out of the buffer closures rather than thrown through them:
        // Swift 6.0's withUnsafeBufferPointer rethrows untyped, which loses the Errno.
        var failure: Errno?
        write.withUnsafeBufferPointer { tx in
            received.withUnsafeMutableBufferPointer { rx in
                do throws(Errno) {
                    _ = try retryOnInterrupt("SPI_IOC_MESSAGE") {
                        ock_spi_write_then_read(fd, tx.baseAddress, UInt32(tx.count), rx.baseAddress, UInt32(readCount), speed)
                    }
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw .transferFailed(path: path, errno: failure) }
        return received
    }

    private static func apply(_ fd: CInt, _ setting: String, _ call: () -> CInt) throws(Errno) {
        _ = try retryOnInterrupt(setting, call)
    }
}

// Typed SPI failures. Each says what to change, because on a fresh board the usual causes are
// the overlay not being enabled or the agent not being allowed to open the device.

public enum SPIError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No such /dev/spidevB.C: SPI is not enabled, or the chip select is not exported.
    case deviceMissing(path: String)
    /// The node exists but this user may not open it.
    case permissionDenied(path: String, errno: Errno)
    /// Any other open(2) failure.
    case openFailed(path: String, errno: Errno)
    /// The driver refused a setting (mode, bits per word, speed): not a spidev node, or a
    /// controller that cannot do it.
    case settingRefused(path: String, setting: String, errno: Errno)
    /// SPI_IOC_MESSAGE failed.
    case transferFailed(path: String, errno: Errno)
    /// The device was closed.
    case closed(path: String)

    public var description: String {
        switch self {
        case .deviceMissing(let path):
            return "\(path): no such SPI device. On a Raspberry Pi add `dtparam=spi=on` to config.txt "
                + "(for chip select 1 as well, `dtoverlay=spi0-2cs`; for bus 1, `dtoverlay=spi1-1cs` or "
                + "`spi1-2cs`), reboot, and check `ls /dev/spidev*`; see board/README.md"
        case .permissionDenied(let path, let errno):
            return "\(path): permission denied (\(errno)). Add the agent's user to the `spi` group and "
                + "install a udev rule such as `SUBSYSTEM==\"spidev\", GROUP=\"spi\", MODE=\"0660\"`; see board/README.md"
        case .openFailed(let path, let errno):
            return "\(path): cannot open: \(errno)"
        case .settingRefused(let path, let setting, let errno):
            return "\(path): the SPI driver refused \(setting) (\(errno)); is this a spidev node, "
                + "and does the controller support that setting?"
        case .transferFailed(let path, let errno):
            return "\(path): SPI transfer failed: \(errno)"
        case .closed(let path):
            return "\(path): SPI device already closed"
        }
    }

    /// Maps an open(2) failure to the error that names its fix.
    static func opening(_ path: String, _ errno: Errno) -> SPIError {
        switch errno.rawValue {
        case ENOENT, ENODEV, ENXIO: return .deviceMissing(path: path)
        case EACCES, EPERM: return .permissionDenied(path: path, errno: errno)
        default: return .openFailed(path: path, errno: errno)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

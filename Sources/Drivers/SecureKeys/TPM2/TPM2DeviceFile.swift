// A TPM character device (/dev/tpmrm0, /dev/tpm0): one write(2) carries one whole command and
// one read(2) returns the whole response (the kernel's TPM driver buffers both), with poll(2)
// bounding the wait. EINTR is handled by FileDescriptor (retryOnInterrupt), in one place.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

final class TPM2DeviceFile: TPM2Transport {
    private var fd: FileDescriptor?
    let path: String
    /// A TPM may take seconds for key generation; a minute means it is stuck.
    static let timeoutMillis: Int32 = 60_000

    init(path: String) throws(TPM2TransportError) {
        self.path = path
        do {
            fd = try FileDescriptor.open(path, O_RDWR)
        } catch {
            throw TPM2TransportError(detail: "\(path): \(error)")
        }
    }

    func exchange(_ command: Bytes) throws(TPM2TransportError) -> Bytes {
        guard let fd else { throw TPM2TransportError(detail: "\(path): closed") }
        do {
            let written = try command.withUnsafeBytes { raw throws(Errno) in try fd.write(raw) }
            guard written == command.count else { throw TPM2TransportError(detail: "\(path): short write (\(written) of \(command.count) bytes)") }
            let ready = try Poll.wait([(fd, .readable)], timeoutMillis: Self.timeoutMillis)
            guard ready.first?.contains(.readable) == true else {
                throw TPM2TransportError(detail: "\(path): no response within \(Self.timeoutMillis / 1000) s")
            }
            var buffer = Bytes(repeating: 0, count: TPM2Limits.maxMessage)
            let count = try buffer.withUnsafeMutableBytes { raw throws(Errno) in try fd.read(into: raw) }
            let response = Bytes(buffer.prefix(count))
            ConstantTime.wipe(&buffer)
            let size = try TPM2ResponseFrame.size(ofHeader: Bytes(response.prefix(TPM2ResponseFrame.headerSize)))
            guard size == response.count else { throw TPM2TransportError(detail: "\(path): response of \(response.count) bytes claims \(size)") }
            return response
        } catch let error as TPM2TransportError {
            throw error
        } catch {
            throw TPM2TransportError(detail: "\(path): \(error)")
        }
    }

    func close() {
        fd?.close()
        fd = nil
    }

    deinit { close() }
}

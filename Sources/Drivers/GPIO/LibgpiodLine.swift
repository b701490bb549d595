// A handle on one line requested through LibgpiodBackend; the library's pointer itself stays
// inside the backend's lock, the handle only names the line.
final class LibgpiodLine: GPIOOutputLine, GPIOInputLine {
    let backend: LibgpiodBackend
    let reference: GPIOLineReference
    let edgeDescriptor: FileDescriptor?

    init(backend: LibgpiodBackend, reference: GPIOLineReference, edgeDescriptor: FileDescriptor?) {
        self.backend = backend
        self.reference = reference
        self.edgeDescriptor = edgeDescriptor
    }

    func drainEdges() throws(GPIOError) -> Int {
        guard edgeDescriptor != nil else { return 0 }
        return try backend.drainEdges(reference)
    }

    func setActive(_ active: Bool) throws(GPIOError) { try backend.setValue(reference, active: active) }
    func isActive() throws(GPIOError) -> Bool { try backend.getValue(reference) }
    func release() { backend.release(reference) }
}

// Small helpers over OpenSSL's error queue and BIO, shared by the key and signature code.
import COpenSSL
import CShims

enum OpenSSL {
    /// Drains OpenSSL's thread-local error queue into one string (and leaves it empty, so a
    /// stale error never leaks into the next call's diagnosis).
    static func drainErrors() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let end = buffer.firstIndex(of: 0) ?? buffer.count
            parts.append(String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.isEmpty ? "unknown error" : parts.joined(separator: "; ")
    }

    /// OSSL_PARAM stores its key pointer, so the key must outlive the call that builds the
    /// param: a StaticString's storage lives in the binary's constant data for the whole run
    /// (and Swift emits literals NUL-terminated).
    static func paramKey(_ key: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(key.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// A failure of a call that should not fail on valid input.
    static func failure(_ call: String) -> CryptoError {
        .openSSL("\(call): \(drainErrors())")
    }

    /// Runs `body` with a read-only memory BIO over `bytes`.
    static func withReadBIO<T>(_ bytes: Bytes, _ body: (OpaquePointer) throws -> T) throws -> T {
        try bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else {
                throw failure("BIO_new_mem_buf")
            }
            defer { BIO_free(bio) }
            return try body(bio)
        }
    }

    /// Runs `body` with a writable memory BIO and returns what it wrote.
    static func collectBIO(_ body: (OpaquePointer) throws -> Int32) throws -> Bytes {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("BIO_new") }
        defer { BIO_free(bio) }
        guard try body(bio) == 1 else { throw failure("BIO write") }
        var pointer: UnsafeMutablePointer<CChar>? = nil
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        guard length >= 0, let start = pointer else { return [] }
        return start.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }
}

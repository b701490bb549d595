// Attribute templates (CK_ATTRIBUTE arrays) for object search and creation. PKCS#11 takes
// pointers to each value, so the values are copied into one buffer that lives exactly as long
// as the call that reads them, and is zeroed before it is freed (a template may carry a
// peer's point or an IV; nothing secret, but nothing left behind either).
#if canImport(Glibc)
import Glibc
#endif
import CPKCS11
import Protocol

struct PKCS11Attribute {
    let type: CK_ATTRIBUTE_TYPE
    let value: Bytes

    static func bool(_ type: CK_ATTRIBUTE_TYPE, _ value: Bool) -> PKCS11Attribute {
        // CK_BBOOL is an unsigned char: CK_TRUE 1, CK_FALSE 0.
        PKCS11Attribute(type: type, value: [value ? 1 : 0])
    }

    static func ulong(_ type: CK_ATTRIBUTE_TYPE, _ value: UInt) -> PKCS11Attribute {
        // CK_ULONG in host byte order, as the module reads it.
        PKCS11Attribute(type: type, value: withUnsafeBytes(of: value) { Array($0) })
    }

    static func bytes(_ type: CK_ATTRIBUTE_TYPE, _ value: Bytes) -> PKCS11Attribute {
        PKCS11Attribute(type: type, value: value)
    }
}

enum PKCS11Template {
    /// Calls `body` with a CK_ATTRIBUTE array for `attributes` and its length.
    static func with<R>(_ attributes: [PKCS11Attribute],
                        _ body: (UnsafeMutablePointer<CK_ATTRIBUTE>, UInt) throws(SecureKeyError) -> R) throws(SecureKeyError) -> R {
        let total = attributes.reduce(0) { $0 + $1.value.count }
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(total, 1), alignment: 16)
        let array = UnsafeMutablePointer<CK_ATTRIBUTE>.allocate(capacity: max(attributes.count, 1))
        defer {
            memset(storage, 0, max(total, 1))
            storage.deallocate()
            array.deallocate()
        }
        var offset = 0
        for (index, attribute) in attributes.enumerated() {
            let target = storage + offset
            attribute.value.withUnsafeBytes { source in
                if let base = source.baseAddress { target.copyMemory(from: base, byteCount: source.count) }
            }
            (array + index).initialize(to: CK_ATTRIBUTE(type: attribute.type, pValue: target,
                                                        ulValueLen: UInt(attribute.value.count)))
            offset += attribute.value.count
        }
        return try body(array, UInt(attributes.count))
    }
}

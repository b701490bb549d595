// The bridge's requests and answers (docs/pkcs11-bridge.md, "Operations" and "Answers"); the C
// side is tools/pkcs11-bridge/protocol.h. Requests are built here; answers are parsed here with
// every field bounded, so PKCS11BridgeProcess only moves frames.
import CPKCS11
import Protocol

/// The operation codes.
enum PKCS11BridgeOperation: UInt8 {
    case open = 1, find, attribute, generateKeyPair, generateKey, sign, deriveECDH, destroy, aesGCM
}

/// Why the bridge refused a request without reaching the module (status 2).
public enum PKCS11BridgeFailure: UInt8, Sendable {
    case malformed = 1, moduleMissing, moduleNotLoadable, notPKCS11, unsupportedVersion, tokenNotFound, notOpen,
         attributeUnavailable
}

/// One answer frame's body.
public enum PKCS11BridgeAnswer: Equatable, Sendable {
    /// Status 0: the operation's result fields, parsed by the `PKCS11BridgeResult` readers.
    case ok(Bytes)
    /// Status 1: the module answered `rv` to `function`.
    case pkcs11(rv: UInt64, function: String)
    /// Status 2: the bridge refused (its failure code and a detail).
    case bridge(PKCS11BridgeFailure, detail: String)

    /// Zeroes a status-0 payload (an ECDH secret, the unwrapped storage key) in place: the
    /// enum lets go of it first, so the wipe reaches its buffer instead of a copy.
    mutating func wipe() {
        guard case .ok(var payload) = self else { return }
        self = .ok([])
        ConstantTime.wipe(&payload)
    }

    public static func parse(_ body: Bytes) throws(PKCS11BridgeFrameError) -> PKCS11BridgeAnswer {
        guard (1...PKCS11BridgeFrame.maxBody).contains(body.count) else { throw .frameLength(body.count) }
        var reader = PKCS11BridgeReader(body)
        let status = try reader.u8()
        switch status {
        case 0:
            return .ok(Array(body.dropFirst()))
        case 1:
            let rv = try reader.u64()
            let function = try reader.bytes(cap: 64)
            try reader.finish()
            return .pkcs11(rv: rv, function: String(decoding: function, as: UTF8.self))
        case 2:
            let code = try reader.u8()
            guard let failure = PKCS11BridgeFailure(rawValue: code) else { throw .unknownCode(code) }
            let detail = try reader.bytes()
            try reader.finish()
            return .bridge(failure, detail: String(decoding: detail, as: UTF8.self))
        default:
            throw .unknownCode(status)
        }
    }
}

/// The result fields of a status-0 answer, one reader per operation's shape.
public enum PKCS11BridgeResult {
    public static func opened(_ payload: Bytes) throws(PKCS11BridgeFrameError) -> (manufacturer: String, model: String) {
        var reader = PKCS11BridgeReader(payload)
        let manufacturer = try reader.bytes(cap: 32)
        let model = try reader.bytes(cap: 16)
        try reader.finish()
        return (String(decoding: manufacturer, as: UTF8.self), String(decoding: model, as: UTF8.self))
    }

    public static func handles(_ payload: Bytes) throws(PKCS11BridgeFrameError) -> [UInt64] {
        var reader = PKCS11BridgeReader(payload)
        let count = Int(try reader.u32())
        guard count <= PKCS11BridgeFrame.maxHandles else { throw .tooMany(count) }
        var handles: [UInt64] = []
        for _ in 0..<count { handles.append(try reader.u64()) }
        try reader.finish()
        return handles
    }

    public static func handle(_ payload: Bytes) throws(PKCS11BridgeFrameError) -> UInt64 {
        var reader = PKCS11BridgeReader(payload)
        let handle = try reader.u64()
        try reader.finish()
        return handle
    }

    public static func handlePair(_ payload: Bytes) throws(PKCS11BridgeFrameError) -> (UInt64, UInt64) {
        var reader = PKCS11BridgeReader(payload)
        let first = try reader.u64()
        let second = try reader.u64()
        try reader.finish()
        return (first, second)
    }

    public static func value(_ payload: Bytes) throws(PKCS11BridgeFrameError) -> Bytes {
        var reader = PKCS11BridgeReader(payload)
        let value = try reader.bytes()
        try reader.finish()
        return value
    }

    public static func empty(_ payload: Bytes) throws(PKCS11BridgeFrameError) {
        try PKCS11BridgeReader(payload).finish()
    }
}

/// Request frames (length prefix included), one builder per operation.
enum PKCS11BridgeRequest {
    private static func frame(_ operation: PKCS11BridgeOperation, _ fields: (inout PKCS11BridgeWriter) -> Void) -> Bytes {
        var writer = PKCS11BridgeWriter()
        writer.u8(operation.rawValue)
        fields(&writer)
        return writer.framed()
    }

    /// The only frame that carries the PIN; PKCS11BridgeProcess wipes it once written.
    static func open(label: String, pin: Bytes) -> Bytes {
        frame(.open) { $0.bytes(Array(label.utf8)); $0.bytes(pin) }
    }

    static func find(limit: Int, template: [PKCS11Attribute]) -> Bytes {
        frame(.find) { $0.u32(UInt32(limit)); $0.template(template) }
    }

    static func attribute(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE) -> Bytes {
        frame(.attribute) { $0.u64(UInt64(object)); $0.u64(UInt64(type)) }
    }

    static func generateKeyPair(mechanism: CK_MECHANISM_TYPE, publicTemplate: [PKCS11Attribute],
                                privateTemplate: [PKCS11Attribute]) -> Bytes {
        frame(.generateKeyPair) { $0.u64(UInt64(mechanism)); $0.template(publicTemplate); $0.template(privateTemplate) }
    }

    static func generateKey(mechanism: CK_MECHANISM_TYPE, template: [PKCS11Attribute]) -> Bytes {
        frame(.generateKey) { $0.u64(UInt64(mechanism)); $0.template(template) }
    }

    static func sign(_ data: Bytes, key: CK_OBJECT_HANDLE, mechanism: CK_MECHANISM_TYPE, maxLength: Int) -> Bytes {
        frame(.sign) { $0.u64(UInt64(key)); $0.u64(UInt64(mechanism)); $0.u32(UInt32(maxLength)); $0.bytes(data) }
    }

    static func deriveECDH(from key: CK_OBJECT_HANDLE, publicData: Bytes, template: [PKCS11Attribute]) -> Bytes {
        frame(.deriveECDH) { $0.u64(UInt64(key)); $0.bytes(publicData); $0.template(template) }
    }

    static func destroy(_ object: CK_OBJECT_HANDLE) -> Bytes {
        frame(.destroy) { $0.u64(UInt64(object)) }
    }

    static func aesGCM(encrypt: Bool, key: CK_OBJECT_HANDLE, tagBits: Int, iv: Bytes, aad: Bytes, input: Bytes) -> Bytes {
        frame(.aesGCM) {
            $0.u8(encrypt ? 1 : 0); $0.u64(UInt64(key)); $0.u32(UInt32(tagBits))
            $0.bytes(iv); $0.bytes(aad); $0.bytes(input)
        }
    }
}

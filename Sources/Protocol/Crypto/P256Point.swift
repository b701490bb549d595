// P-256 points and scalars for SPAKE2+ (RFC 9383). Every group operation is OpenSSL's
// (EC_POINT_*, BN_*): this file only holds pointers and converts bytes, it does no arithmetic.
import COpenSSL

/// The P-256 group, built once. An EC_GROUP that is never modified may be shared by threads.
final class P256Group: @unchecked Sendable {
    static let shared = P256Group()
    let group: OpaquePointer?
    private init() { group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) }
}

/// A scalar modulo the group order n, held in a BIGNUM that is cleared when freed.
final class P256Scalar: @unchecked Sendable {
    let bn: OpaquePointer

    private init(owning bn: OpaquePointer) { self.bn = bn }
    deinit { BN_clear_free(bn) }

    /// `bytes` (big-endian, any length up to 64) reduced modulo n. Refuses a result of zero:
    /// every SPAKE2+ scalar (w0, w1, x, y) must be non-zero.
    static func reducing(_ bytes: Bytes) throws(CryptoError) -> P256Scalar {
        guard !bytes.isEmpty, bytes.count <= 64 else {
            throw .invalidLength(field: "scalar", expected: 32, actual: bytes.count)
        }
        guard let group = P256Group.shared.group, let order = EC_GROUP_get0_order(group),
              let ctx = BN_CTX_new() else { throw OpenSSL.failure("P-256 group") }
        defer { BN_CTX_free(ctx) }
        guard let wide = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            throw OpenSSL.failure("BN_bin2bn")
        }
        defer { BN_clear_free(wide) }
        guard let reduced = BN_new() else { throw OpenSSL.failure("BN_new") }
        guard BN_nnmod(reduced, wide, order, ctx) == 1 else {
            BN_clear_free(reduced)
            throw OpenSSL.failure("BN_nnmod")
        }
        guard BN_is_zero(reduced) == 0 else {
            BN_clear_free(reduced)
            throw .invalidPrivateKey("scalar is zero modulo the group order")
        }
        return P256Scalar(owning: reduced)
    }

    /// A 32-byte big-endian scalar that must already be in 1..<n (test vectors, w0 as sent).
    static func exact(_ bytes: Bytes) throws(CryptoError) -> P256Scalar {
        guard bytes.count == 32 else { throw .invalidLength(field: "scalar", expected: 32, actual: bytes.count) }
        guard P256Curve.isValidScalar(bytes) else { throw .invalidPrivateKey("scalar not in 1..<n") }
        return try reducing(bytes)
    }

    /// The 32-byte big-endian encoding (the `w0` of the transcript).
    var bytes: Bytes {
        var out = Bytes(repeating: 0, count: 32)
        _ = BN_bn2binpad(bn, &out, 32)
        return out
    }
}

/// A point of P-256 other than the identity (every point SPAKE2+ sends or keeps).
final class P256Point: @unchecked Sendable {
    let point: OpaquePointer

    private init(owning point: OpaquePointer) { self.point = point }
    deinit { EC_POINT_free(point) }

    /// Decodes a 65-byte SEC1 uncompressed point. EC_POINT_oct2point refuses points that are
    /// not on the curve; the identity has no 65-byte encoding, and is refused again by
    /// `checked`. P-256 has cofactor 1, so a point on the curve is in the prime-order group.
    static func decode(_ sec1: Bytes) throws(CryptoError) -> P256Point {
        guard sec1.count == P256PublicKey.sec1Length, sec1[0] == 0x04 else {
            throw .invalidPublicKey("expected a 65-byte uncompressed point")
        }
        guard let group = P256Group.shared.group, let point = EC_POINT_new(group) else { throw OpenSSL.failure("EC_POINT_new") }
        let ok = sec1.withUnsafeBufferPointer { EC_POINT_oct2point(group, point, $0.baseAddress, $0.count, nil) }
        guard ok == 1 else {
            EC_POINT_free(point)
            _ = OpenSSL.drainErrors()
            throw .invalidPublicKey("point is not on the curve")
        }
        return try P256Point(owning: point).checked()
    }

    /// Refuses the identity (a share or a Z, V that collapsed to it).
    func checked() throws(CryptoError) -> P256Point {
        guard let group = P256Group.shared.group, EC_POINT_is_at_infinity(group, point) == 0 else {
            throw .invalidPublicKey("the identity element")
        }
        return self
    }

    /// `k * G`.
    static func generator(times k: P256Scalar) throws(CryptoError) -> P256Point {
        try multiply(generatorScalar: k, point: nil, scalar: nil)
    }

    /// `k * self`.
    func times(_ k: P256Scalar) throws(CryptoError) -> P256Point {
        try Self.multiply(generatorScalar: nil, point: self, scalar: k)
    }

    /// One scalar multiplication per call: OpenSSL runs its constant-time ladder for a single
    /// scalar, while a combined `n*G + m*Q` would take the variable-time wNAF path.
    private static func multiply(generatorScalar: P256Scalar?, point: P256Point?, scalar: P256Scalar?) throws(CryptoError) -> P256Point {
        guard let group = P256Group.shared.group, let result = EC_POINT_new(group) else { throw OpenSSL.failure("EC_POINT_new") }
        guard let ctx = BN_CTX_new() else {
            EC_POINT_free(result)
            throw OpenSSL.failure("BN_CTX_new")
        }
        defer { BN_CTX_free(ctx) }
        guard EC_POINT_mul(group, result, generatorScalar?.bn, point?.point, scalar?.bn, ctx) == 1 else {
            EC_POINT_free(result)
            throw OpenSSL.failure("EC_POINT_mul")
        }
        return P256Point(owning: result)
    }

    /// `self + other`.
    func adding(_ other: P256Point) throws(CryptoError) -> P256Point {
        guard let group = P256Group.shared.group, let result = EC_POINT_new(group) else { throw OpenSSL.failure("EC_POINT_new") }
        guard EC_POINT_add(group, result, point, other.point, nil) == 1 else {
            EC_POINT_free(result)
            throw OpenSSL.failure("EC_POINT_add")
        }
        return P256Point(owning: result)
    }

    /// `-self`.
    func negated() throws(CryptoError) -> P256Point {
        guard let group = P256Group.shared.group, let result = EC_POINT_dup(point, group) else { throw OpenSSL.failure("EC_POINT_dup") }
        guard EC_POINT_invert(group, result, nil) == 1 else {
            EC_POINT_free(result)
            throw OpenSSL.failure("EC_POINT_invert")
        }
        return P256Point(owning: result)
    }

    /// The 65-byte SEC1 uncompressed encoding, as the RFC 9383 vectors and our wire use it.
    func encoded() throws(CryptoError) -> Bytes {
        guard let group = P256Group.shared.group else { throw OpenSSL.failure("P-256 group") }
        var out = Bytes(repeating: 0, count: P256PublicKey.sec1Length)
        let length = EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &out, out.count, nil)
        guard length == P256PublicKey.sec1Length else { throw .invalidPublicKey("the identity has no SEC1 point encoding") }
        return out
    }
}

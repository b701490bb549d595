// Bridges from the untyped crypto API and the codec errors to the one fault the car reports,
// so handler bodies can be straight-line `try` code.

/// Runs `body`; any error becomes `fault`. Used where the reason does not matter to the peer
/// (a bad DER signature is simply a bad signature; a failing RNG is an internal error).
func attempt<T>(_ fault: FaultCode, _ body: () throws -> T) throws(FaultCode) -> T {
    do { return try body() } catch { throw fault }
}

/// Runs a codec; its error becomes the matching fault (malformed or unsupported version).
func decoded<T>(_ body: () throws(MessageFormatError) -> T) throws(FaultCode) -> T {
    do throws(MessageFormatError) { return try body() } catch { throw error.fault }
}

// Public entry points for the fuzz targets (Fuzz/Targets/TPM2Targets.swift) over the internal
// TPM response and public-area parsers: what a hostile TPM, bus or blob file can feed them.
import Protocol

public enum TPM2WireFuzzing {
    /// The response parser on `bytes` for a command returning `handleCount` handles with
    /// `sessionCount` sessions: nil when refused, else the response encoded again from what was
    /// parsed (Part 1 §18.8 layout), which must be `bytes` itself: every byte accounted for.
    public static func response(_ bytes: Bytes, handleCount: Int, sessionCount: Int) -> Bytes? {
        guard let frame = try? TPM2CommandFrame.decode(bytes, handleCount: handleCount, sessionCount: sessionCount) else { return nil }
        let tag = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        var body = TPM2Writer()
        if frame.code == 0 {
            for handle in frame.handles { body.u32(handle) }
            if tag == TPM2Tag.sessions { body.u32(UInt32(frame.parameters.count)) }
            body.raw(frame.parameters)
            for auth in frame.auths {
                body.sized(auth.nonce)
                body.u8(auth.attributes)
                body.sized(auth.hmac)
            }
        }
        var writer = TPM2Writer()
        writer.u16(tag)
        writer.u32(UInt32(10 + body.bytes.count))
        writer.u32(frame.code)
        writer.raw(body.bytes)
        return writer.bytes
    }

    /// A TPM2B_PUBLIC blob file's parser: nil when refused, else the parsed area marshalled again.
    public static func publicArea(_ bytes: Bytes) -> Bytes? {
        (try? TPM2PublicArea.parseSized(bytes))?.sizedBytes
    }
}

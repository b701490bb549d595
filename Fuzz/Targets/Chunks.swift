// Splits one fuzz input into a sequence of chunks (PDUs, fragments, reads): each chunk is a
// length byte followed by that many bytes, so the fuzzer controls the boundaries.
import Protocol

enum Chunks {
    static func split(_ input: Bytes, maxChunks: Int = 64) -> [Bytes] {
        var out: [Bytes] = []
        var i = 0
        while i < input.count, out.count < maxChunks {
            let length = Int(input[i])
            let start = i + 1
            let end = min(start + length, input.count)
            out.append(Array(input[start..<end]))
            i = end
        }
        return out
    }
}

// BLE side: the ATT server state machine, the request parser, the link-frame assembler and the
// protocol's fragment reassembler.
import Drivers
import Protocol

enum TransportTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget("att-server", "ATTServerConnection(car database) fed a PDU sequence: every response PDU <= negotiated MTU (<= 517), every delivered message <= Wire.maxMessageLength, queue <= maxQueuedMessages, closed stays closed") { input throws(PropertyViolation) in
            var server = ATTServerConnection(database: GATTDatabase.car())
            var any = false
            for pdu in Chunks.split(input) {
                let wasClosed = server.isClosed
                let output = server.receive(pdu)
                try require(server.mtu >= ATTServerConnection.minimumMTU && server.mtu <= Int(ATTServerConnection.maximumMTU), "MTU within 23...517")
                for response in output.pdus {
                    try require(response.count <= server.mtu, "response PDU \(response.count) <= MTU \(server.mtu)")
                    any = true
                }
                for message in output.messages { try require(!message.isEmpty && message.count <= Wire.maxMessageLength, "delivered message within Wire.maxMessageLength") }
                try require(server.queuedMessageCount <= ATTServerConnection.maxQueuedMessages, "queue bounded")
                if wasClosed { try require(server.isClosed && output == ATTServerOutput(), "closed connection answers nothing") }
            }
            return any
        },
        FuzzTarget("att-request", "ATTRequest.parse is deterministic; an accepted PDU is parsed the same after a copy; no trap on any byte string") { input throws(PropertyViolation) in
            guard let request = try? ATTRequest.parse(input) else { return false }
            try require((try? ATTRequest.parse(Array(input))) == request, "parse deterministic")
            return true
        },
        FuzzTarget("link-framing", "LinkFrameAssembler over arbitrary chunking: frame(m) of each delivered message re-creates the consumed bytes in order; pending < 2 + maxMessageLength; the same stream in one append gives the same messages") { input throws(PropertyViolation) in
            var assembler = LinkFrameAssembler()
            var delivered: [Bytes] = []
            var failed = false
            for chunk in Chunks.split(input) {
                do throws(LinkFrameError) {
                    delivered += try assembler.append(chunk)
                } catch { failed = true; break }
                try require(assembler.pendingByteCount < LinkFraming.headerLength + LinkFraming.maxMessageLength, "pending bounded")
            }
            let stream = Chunks.split(input).reduce([], +)
            var whole = LinkFrameAssembler()
            if !failed, let once = try? whole.append(stream) {
                try require(once == delivered, "chunking does not change the messages")
                var reframed: Bytes = []
                for m in delivered { reframed += (try? LinkFraming.frame(m)) ?? [] }
                try require(Array(stream.prefix(reframed.count)) == reframed, "frame(m) re-creates the stream")
                try require(stream.count - reframed.count == whole.pendingByteCount, "unconsumed bytes are pending")
            }
            return !delivered.isEmpty
        },
        FuzzTarget("fragment-reassembler", "MessageReassembler fed fragments: buffered <= Wire.maxMessageLength, completed message <= Wire.maxMessageLength; fragmenting it again and reassembling gives it back") { input throws(PropertyViolation) in
            var reassembler = MessageReassembler()
            var completed = false
            for fragment in Chunks.split(input) {
                let message: Bytes?
                do throws(FragmentError) { message = try reassembler.append(fragment) } catch { continue }
                try require(reassembler.bufferedByteCount <= Wire.maxMessageLength, "buffer bounded")
                guard let message else { continue }
                completed = true
                try require(message.count <= Wire.maxMessageLength, "message bounded")
                if let again = try? MessageFragmenter.fragments(of: message, maxFragment: 20) {
                    var fresh = MessageReassembler()
                    var out: Bytes?
                    for f in again { out = (try? fresh.append(f)) ?? nil }
                    try require(out == message, "reassemble(fragment(m)) == m")
                }
            }
            return completed
        },
    ]
}

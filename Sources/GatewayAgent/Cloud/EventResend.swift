// The cloud's `resendEvents` request on vehicles/{id}/commands (docs/cloud.md, "Inbound
// envelope"): publish a range of the event log again. A broker node that acknowledged an
// event can still lose it before a subscriber reads it (a node rejoining its cluster drops
// sessions); the car did its part, so only the back end can see the gap, by `seq`, and ask.
//
// Unsigned on purpose: it changes nothing in the car and only re-publishes, byte for byte,
// what the cloud already receives on vehicles/{id}/events; and only the back end may publish
// to vehicles/+/commands (broker ACL). What a forged request could cost is the cellular bill,
// and that is capped: at most `maximumEvents` events per request and one accepted request per
// `minimumIntervalMillis` per car (on the monotonic clock, so a wall-clock step cannot reopen it).
import Drivers
import Protocol

/// The request's body: 16 bytes, `fromSeq` then `toSeq`, each a UInt64 big-endian.
struct EventResendRange: Equatable {
    static let bodyLength = 16
    let fromSeq: UInt64
    let toSeq: UInt64

    init(fromSeq: UInt64, toSeq: UInt64) {
        self.fromSeq = fromSeq
        self.toSeq = toSeq
    }

    /// nil unless `body` is exactly 16 bytes.
    init?(body: Bytes) {
        guard body.count == Self.bodyLength else { return nil }
        func word(_ start: Int) -> UInt64 { body[start..<(start + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        self.init(fromSeq: word(0), toSeq: word(8))
    }

    var body: Bytes {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: fromSeq >> (8 * UInt64($0))) }
            + (0..<8).reversed().map { UInt8(truncatingIfNeeded: toSeq >> (8 * UInt64($0))) }
    }
}

final class EventResend {
    static let maximumEvents: UInt64 = 500
    static let minimumIntervalMillis: UInt64 = 10_000

    /// Why a request was refused, in the order checked; the name goes in the result's `reason`.
    enum Refusal: String, Error {
        /// The body is not exactly 16 bytes.
        case bodyLength
        /// Not 1 <= fromSeq <= toSeq (or toSeq beyond what a sequence number can be).
        case range
        /// More than `maximumEvents` sequence numbers.
        case rangeTooLarge
        /// Another request was accepted less than `minimumIntervalMillis` ago.
        case rateLimited

        var fault: FaultCode { self == .rateLimited ? .rateLimited : .malformedMessage }
    }

    private let cloud: AgentCloud
    private let router: any EventRouter
    private let clock: AgentClock
    private let log: AgentLog
    private var lastAcceptedMillis: UInt64?

    /// `router`: the one the cloud link installed on the store, so a resent event is queued
    /// exactly as it was the first time.
    init(cloud: AgentCloud, router: any EventRouter, clock: AgentClock, log: AgentLog) {
        self.cloud = cloud
        self.router = router
        self.clock = clock
        self.log = log
    }

    /// The range to resend, or why not; `nowMillis` on the monotonic clock. Changes nothing.
    func check(_ body: Bytes, nowMillis: UInt64) -> Result<EventResendRange, Refusal> {
        guard let range = EventResendRange(body: body) else { return .failure(.bodyLength) }
        guard range.fromSeq >= 1, range.fromSeq <= range.toSeq, range.toSeq <= UInt64(Int64.max) else { return .failure(.range) }
        guard range.toSeq - range.fromSeq + 1 <= Self.maximumEvents else { return .failure(.rangeTooLarge) }
        if let last = lastAcceptedMillis, nowMillis < last + Self.minimumIntervalMillis { return .failure(.rateLimited) }
        return .success(range)
    }

    func handle(_ message: InboundEnvelope) {
        let now = clock.monotonicMillis
        let range: EventResendRange
        switch check(message.body, nowMillis: now) {
        case .failure(let refusal):
            log.info("cloud: resendEvents \(message.id) refused: \(refusal.rawValue)")
            var extra: [(String, JSONValue)] = [("reason", .string(refusal.rawValue))]
            if let asked = EventResendRange(body: message.body) {
                extra += [("fromSeq", .integer(Int64(clamping: asked.fromSeq))), ("toSeq", .integer(Int64(clamping: asked.toSeq)))]
            }
            cloud.publishResult(requestID: message.id, type: message.type, result: "refused", fault: refusal.fault, extra: extra)
            return
        case .success(let accepted):
            range = accepted
        }
        // Queued in the transaction that records the request as handled and queues its answer:
        // the events and the result are committed together, or neither is (a retry is then
        // admissible again). A duplicate ID queues nothing (publishResult skips `extraFrom`).
        let bounds = Int64(range.fromSeq)...Int64(range.toSeq)
        var queued: Int?
        cloud.publishResult(requestID: message.id, type: message.type, result: "ok", fault: nil,
                            extra: [("fromSeq", .integer(bounds.lowerBound)), ("toSeq", .integer(bounds.upperBound))],
                            extraFrom: { [router] transaction in
                                let count = try transaction.requeueEvents(bounds, router: router)
                                queued = count
                                return [("count", .integer(Int64(count)))]
                            })
        if let queued {
            lastAcceptedMillis = now
            log.info("cloud: resendEvents \(message.id): \(queued) event(s) of \(bounds.lowerBound)...\(bounds.upperBound) queued again")
        }
    }
}

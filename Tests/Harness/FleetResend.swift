// The fleet back end's recovery pass (docs/cloud.md, "Fleet scale"): a broker node can lose
// events after acknowledging them (a rejoining ejabberd node drops subscriber sessions), so
// the back end asks each car to publish again what it did not get. From the `seq` values it
// received it plans, per car, the gaps between 1 and the highest seq plus a tail (highest+1 to
// highest+500: events lost at the very end leave no gap), in requests of at most 500 seq, and
// sends them as `resendEvents` envelopes: cars in parallel, one request per car in flight and
// at least `intervalSeconds` apart (the car accepts one per 10 s); a request refused as
// rateLimited or left unanswered is sent again later with a new ID. Bounded by `seconds`.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

public enum FleetResend {
    public struct Outcome: Sendable, CustomStringConvertible {
        public var requests = 0
        public var accepted = 0
        public var refused = 0
        /// Sum of the cars' `count`s: events queued again (some the back end already had).
        public var queued = 0
        /// Ranges never answered `ok`: refused for a reason other than the rate limit (e.g. an
        /// agent that answers `unsupported`), or still unanswered at the bound.
        public var unfinished = 0
        public var description: String {
            "\(requests) requests, \(accepted) ok (\(queued) events queued again), \(refused) refused, \(unfinished) unfinished"
        }
    }

    public static let maximumSpan: Int64 = 500

    /// Ranges to ask for, given the seq values received: each starts at the lowest seq not yet
    /// covered that is missing (or in the tail) and spans `maximumSpan`, so nearby gaps share a
    /// request (already-received events in it come again and are de-duplicated by UUID).
    public static func plan(received: Set<Int64>) -> [ClosedRange<Int64>] {
        let highest = received.max() ?? 0
        var ranges: [ClosedRange<Int64>] = []
        var seq: Int64 = 1
        while seq <= highest + maximumSpan {
            if seq > highest || !received.contains(seq) {
                let range = seq...(seq + maximumSpan - 1)
                ranges.append(range)
                seq = range.upperBound + 1
            } else {
                seq += 1
            }
        }
        return ranges
    }

    /// The envelope: 16-byte body, fromSeq then toSeq, UInt64 big-endian, in hex.
    public static func envelope(id: String, range: ClosedRange<Int64>) -> [UInt8] {
        var body: [UInt8] = []
        for value in [UInt64(range.lowerBound), UInt64(range.upperBound)] {
            for shift in stride(from: 56, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        return Array(#"{"id":"\#(id)","type":"resendEvents","body":"\#(body.hexString)"}"#.utf8)
    }

    private struct Car {
        let vehicle: String
        var ranges: [ClosedRange<Int64>]
        var inFlight: (id: String, sentAt: Double)?
        var nextSend = 0.0
    }

    /// Plans from `backend.sequences` and runs the requests to the end or for `seconds`.
    public static func run(backend: FleetBackend, vehicles: [String], intervalSeconds: Double = 11,
                           answerSeconds: Double = 20, seconds: Double = 180) -> Outcome {
        let received = backend.sequences
        var cars = vehicles.map { Car(vehicle: $0, ranges: plan(received: received[$0] ?? [])) }
        var outcome = Outcome()
        let deadline = Monotonic.seconds() + seconds
        while Monotonic.seconds() < deadline, cars.contains(where: { !$0.ranges.isEmpty }) {
            let now = Monotonic.seconds()
            let answers = backend.resendAnswers
            for index in cars.indices where !cars[index].ranges.isEmpty {
                if let flight = cars[index].inFlight {
                    if let answer = answers[flight.id] {
                        cars[index].inFlight = nil
                        if answer.result == "ok" {
                            outcome.accepted += 1
                            outcome.queued += answer.count
                            cars[index].ranges.removeFirst()
                        } else {
                            outcome.refused += 1
                            // Anything but the rate limit is a bug in this plan: do not loop on it.
                            if answer.reason != "rateLimited" {
                                outcome.unfinished += 1
                                cars[index].ranges.removeFirst()
                            }
                        }
                    } else if now - flight.sentAt > answerSeconds {
                        cars[index].inFlight = nil  // lost on the way: ask again with a new ID
                    }
                }
                guard cars[index].inFlight == nil, !cars[index].ranges.isEmpty, now >= cars[index].nextSend,
                      let random = try? SystemRandom().randomBytes(16) else { continue }
                let id = RemoteCommand.uuidString(random).lowercased()  // the car answers with the ID lower-cased
                backend.publish(MQTTPublish(topic: CloudTopics(vehicleID: cars[index].vehicle).commands,
                                            payload: envelope(id: id, range: cars[index].ranges[0]), qos: .atLeastOnce))
                cars[index].inFlight = (id, now)
                cars[index].nextSend = now + intervalSeconds
                outcome.requests += 1
            }
            usleep(100_000)
        }
        outcome.unfinished += cars.reduce(0) { $0 + $1.ranges.count }
        return outcome
    }
}

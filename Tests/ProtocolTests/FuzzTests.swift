// Seeded mutation fuzzing: every decoder and both state machines take arbitrary bytes without
// crashing, and nothing but the genuine phone ever gets a command performed.
import XCTest
@testable import Protocol

/// SplitMix64: tiny, seedable, good enough to drive mutations reproducibly.
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
    mutating func bytes(_ count: Int) -> Bytes { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }

    /// One random structural or bit-level change; never returns the input unchanged.
    mutating func mutate(_ input: Bytes, corpus: [Bytes]) -> Bytes {
        var out = input
        switch below(8) {
        case 0 where !out.isEmpty: out[below(out.count)] ^= UInt8(1 << below(8))
        case 1 where !out.isEmpty: out[below(out.count)] = UInt8(truncatingIfNeeded: next())
        case 2 where !out.isEmpty: out = Array(out.prefix(below(out.count)))
        case 3: out += bytes(1 + below(40))
        case 4 where !out.isEmpty: out.remove(at: below(out.count))
        case 5: out.insert(UInt8(truncatingIfNeeded: next()), at: below(out.count + 1))
        case 6:
            let other = corpus[below(corpus.count)]
            out = Array(out.prefix(below(out.count + 1))) + Array(other.suffix(below(other.count + 1)))
        default: out = bytes(below(1100))
        }
        return out == input ? out + [0] : out
    }
}

final class FuzzTests: XCTestCase {
    /// One genuine run's messages, used as the mutation corpus.
    func corpus() throws -> (rig: Rig, messages: [Bytes], command: Bytes) {
        var rig = Rig()
        let (hello, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { throw PhoneError.notEstablished }
        let accepted = try XCTUnwrap(rig.toCar(auth).sent.first)
        _ = try rig.phone.receive(accepted, now: rig.now)
        let command = try rig.phone.command(.unlock, now: rig.now)
        let performed = rig.toCar(command)
        let response = try XCTUnwrap(rig.car.complete(performed.performs[0].token, result: nil, vehicleState: [], now: rig.now).sent.first)
        return (rig, [hello, challenge, auth, accepted, command, response, FaultMessage(.busy).encoded()], command)
    }

    func testDecodersNeverCrash() throws {
        let (_, messages, _) = try corpus()
        let plaintexts: [Bytes] = [SessionAcceptedBody(role: .owner, permissions: .all, notBefore: 0, notAfter: .max,
                                                       carTime: 1, clockTrusted: true, sessionLifetime: 300).encoded(),
                                   try CommandBody(command: .unlock, expiresAt: 5, args: [1, 2]).encoded(),
                                   ResponseBody(command: .lock, fault: nil, vehicleState: [.locked], carTime: 9).encoded()]
        var random = SplitMix64(state: 0x0CA7_C0DE)
        var decoded = 0
        for _ in 0..<20_000 {
            let input = random.mutate(messages[random.below(messages.count)], corpus: messages)
            if (try? Message.decode(input)) != nil { decoded += 1 }
            _ = MessageDecoder.describe(input)
            let body = random.mutate(plaintexts[random.below(plaintexts.count)], corpus: plaintexts)
            _ = try? SessionAcceptedBody.decode(body)
            _ = try? CommandBody.decode(body)
            _ = try? ResponseBody.decode(body)
        }
        XCTAssertGreaterThan(decoded, 0, "the fuzzer reaches past the first checks")
    }

    func testCarEngineNeverPerformsForMutatedInput() throws {
        var (rig, messages, command) = try corpus()
        var random = SplitMix64(state: 0xF00D)
        // Plenty of failures are expected; keep the limiter from hiding the later checks.
        var fresh = Rig(configure: { $0.rateLimit = RateLimitPolicy(failureThreshold: 1_000_000) })
        for iteration in 0..<3_000 {
            let input = random.mutate(messages[random.below(messages.count)], corpus: messages)
            // Into the established session (its genuine command was already used) ...
            let inSession = rig.toCar(input)
            XCTAssertTrue(inSession.performs.isEmpty, "iteration \(iteration): \(input.hexString)")
            XCTAssertTrue(inSession.grants.isEmpty)
            // ... and onto links with no state or a pending handshake.
            let link = LinkID(UInt64(100 + random.below(4)))
            let cold = fresh.toCar(input, link: link)
            XCTAssertTrue(cold.performs.isEmpty, "iteration \(iteration): \(input.hexString)")
            XCTAssertTrue(cold.grants.isEmpty, "iteration \(iteration): \(input.hexString)")
            XCTAssertFalse(cold.sent.isEmpty, "every message gets an answer")
            for bytes in cold.sent { XCTAssertLessThanOrEqual(bytes.count, Wire.maxMessageLength) }
            if iteration % 500 == 0 { rig.advance(seconds: 0.1) }
        }
        XCTAssertTrue(rig.toCar(command).performs.isEmpty, "the genuine command cannot be replayed either")
    }

    func testPhoneSessionNeverCrashesOrEstablishesOnMutatedInput() throws {
        let (_, messages, _) = try corpus()
        var random = SplitMix64(state: 0xBEEF)
        for _ in 0..<1_000 {
            var rig = Rig()
            let (_, challenge) = try rig.helloAndChallenge()
            let input = random.mutate(random.below(2) == 0 ? challenge : messages[random.below(messages.count)], corpus: messages)
            if case .send(let auth)? = try? rig.phone.receive(input, now: rig.now) {
                // Only a Challenge that verifies over our Hello can get here: it must be the genuine one.
                XCTAssertEqual(try ChallengeMessage.decode(input).body, try ChallengeMessage.decode(challenge).body)
                XCTAssertFalse(auth.isEmpty)
            }
            XCTAssertFalse(rig.phone.isEstablished)
        }
    }
}

// The handshake budget always refills. Once, after about 115 Hellos naming one enrolled key,
// every later Hello was answered `busy` and the car never recovered. This drives the engine
// the way the agent does (links opened with and without a peer address, Hellos, floods,
// handshakes completed or abandoned, malformed frames, phones hanging up, the car closing
// links it ends without telling the engine again, the 3 s handshake deadline, ticks) from many
// seeds and budget sizes, then lets the car rest: a new link's Hello must then be challenged,
// and no peer that was ever seen may still be answered `busy`.
import XCTest
@testable import Protocol

final class HandshakeBudgetRefillTests: XCTestCase {
    private struct Link {
        let peer: String?
        let connectedAt: UInt64
        var phone: PhoneProtocolSession?
        var challenge: Bytes?
    }

    private let owner = Fixtures.phoneKey
    private let guest = Fixtures.otherPhoneKey
    private static let peers: [String?] = ["AA:00:00:00:00:01", "AA:00:00:00:00:02", "AA:00:00:00:00:03", nil]
    private static let handshakeDeadlineMillis: UInt64 = 3000

    func testTheBudgetAlwaysRefillsAfterRest() throws {
        for seed in UInt64(1)...24 {
            try run(seed: seed)
        }
    }

    private func run(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let perPeer = HandshakeBudget(perSecond: 1 + random.below(3), burst: 1 + random.below(5))
        // Standard, or cut as a slow key vault cuts it (VaultSignBudget: down to 1/s, burst 1).
        let carWide = random.below(2) == 0 ? HandshakeBudget(perSecond: 200, burst: 100)
                                           : HandshakeBudget(perSecond: 1 + random.below(10), burst: 1 + random.below(10))
        var rig = AdmissionRig(records: [KeyRecord(publicKey: owner.publicKey, role: .owner, permissions: .all),
                                         KeyRecord(publicKey: guest.publicKey, role: .shared, permissions: .unlock)]) {
            $0.handshakeBudgetPerPeer = perPeer
            $0.handshakeBudgetCarWide = carWide
        }
        var open: [UInt64: Link] = [:]
        var nextLink: UInt64 = 1
        let context = "seed \(seed), per peer \(perPeer), car-wide \(carWide)"

        func apply(_ actions: [CarAction]) {
            // The agent closes a link the engine ends (server.close) without reporting it back.
            for action in actions { if case .closeLink(let link) = action { open[link.rawValue] = nil } }
        }
        func tick() {
            apply(rig.car.tick(now: rig.now))
            for (id, link) in open where rig.now.monotonicMillis >= link.connectedAt + Self.handshakeDeadlineMillis {
                let phase = rig.car.phase(of: LinkID(id))
                guard phase == .idle || phase == .handshaking else { continue }
                open[id] = nil
                apply(rig.car.linkClosed(LinkID(id), now: rig.now))
            }
        }

        for _ in 0..<400 {
            let ids = open.keys.sorted()
            let pick = ids.isEmpty ? nil : ids[random.below(ids.count)]
            switch random.below(10) {
            case 0, 1:
                guard open.count < 8 else { break }
                let peer = Self.peers[random.below(Self.peers.count)]
                rig.car.linkOpened(LinkID(nextLink), peerAddress: peer)
                open[nextLink] = Link(peer: peer, connectedAt: rig.now.monotonicMillis)
                nextLink += 1
            case 2, 3:
                guard let id = pick else { break }
                var phone = rig.phone(random.below(4) == 0 ? guest : owner)
                let actions = try rig.hello(&phone, link: LinkID(id))
                let challenge = actions.sent.last.flatMap { $0.first == MessageType.challenge.rawValue ? $0 : nil }
                open[id]?.phone = phone
                open[id]?.challenge = challenge
                apply(actions)
            case 4:
                guard let id = pick, var phone = open[id]?.phone, let challenge = open[id]?.challenge else { break }
                open[id]?.challenge = nil
                if case .send(let auth) = try phone.receive(challenge, now: rig.now) {
                    apply(rig.car.receive(auth, from: LinkID(id), now: rig.now))
                }
            case 5:
                guard let id = pick else { break }
                // A flood of Hellos on one link, as a misbehaving central sends them.
                for _ in 0..<(5 + random.below(30)) {
                    var phone = rig.phone(owner)
                    apply(try rig.hello(&phone, link: LinkID(id)))
                    if open[id] == nil { break }
                }
            case 6:
                guard let id = pick else { break }
                apply(rig.car.receive(AdmissionRig.malformed(), from: LinkID(id), now: rig.now))
            case 7:
                guard let id = pick else { break }
                open[id] = nil
                apply(rig.car.linkClosed(LinkID(id), now: rig.now))
            case 8:
                tick()
            default:
                rig.advance(millis: UInt64(random.below(4) == 0 ? random.below(3000) : random.below(50)))
            }
        }

        // Rest, with the agent's one tick a second, long enough for every bucket to refill,
        // every challenge and session to expire and every R0 penalty of this run to end.
        for _ in 0..<1000 {
            rig.advance(millis: 1000)
            tick()
        }
        let fresh = LinkID(nextLink)
        rig.car.linkOpened(fresh, peerAddress: "BB:00:00:00:00:01")
        var phone = rig.phone(owner)
        let actions = try rig.hello(&phone, link: fresh)
        XCTAssertEqual(actions.sent.last?.first, MessageType.challenge.rawValue,
                       "a new peer after rest is not challenged (\(actions.cleartextFault.map { "\($0)" } ?? "no fault")), \(context)")
        nextLink += 1
        for peer in Self.peers {
            // Each probe after its own rest: one at the same instant as the last may meet an
            // empty car-wide bucket of burst 1, which is the budget working, not stuck.
            for _ in 0..<10 {
                rig.advance(millis: 1000)
                tick()
            }
            let link = LinkID(nextLink)
            nextLink += 1
            rig.car.linkOpened(link, peerAddress: peer)
            var phone = rig.phone(owner)
            let reply = try rig.hello(&phone, link: link)
            XCTAssertNotEqual(reply.cleartextFault, .busy, "peer \(peer ?? "none") still busy after rest, \(context)")
            _ = rig.car.linkClosed(link, now: rig.now)
        }
    }
}

// Attackers in radio range of the car, as the issue-14 campaign ran them against the simulated
// link (one Unix-socket connection = one BLE connection): each kind runs on its own thread,
// drives raw sockets without ever blocking, and counts its tries. Used by the attack suite
// (Attack*Tests) and `carkey-bench attack` (the same attacks at 1x and 10x their rates).
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Drivers
import Protocol

public enum LinkAttack: Sendable, CustomStringConvertible {
    /// Every `everyMillis`, a new connection carrying `burst` malformed frames, then closed.
    case malformedBursts(burst: Int, everyMillis: UInt64)
    /// `count` connections that never send anything, each reopened as soon as the car closes it.
    case silentConnections(count: Int)
    /// `count` connections that announce a 64-byte message and send one byte of it every
    /// `byteEveryMillis`, never finishing; reopened when closed.
    case trickledHalfFrames(count: Int, byteEveryMillis: UInt64)
    /// `links` connections each sending a Hello with `keyID` (an enrolled key the attacker
    /// cannot sign for) every `everyMillis`: every one that passes costs the car a signature.
    case helloFlood(keyID: KeyID, links: Int, everyMillis: UInt64)

    public var description: String {
        switch self {
        case .malformedBursts(let burst, let every): return "bursts of \(burst) malformed frames every \(every) ms"
        case .silentConnections(let count): return "\(count) silent connections"
        case .trickledHalfFrames(let count, let every): return "\(count) connections trickling a byte every \(every) ms"
        case .helloFlood(_, let links, let every): return "\(links) links sending an enrolled key's Hello every \(every) ms"
        }
    }
}

public final class LinkAttacker: Sendable {
    public let attack: LinkAttack
    public let socketPath: String
    private let stopping = Atomic<Bool>(false)
    private let tries = Atomic<Int>(0)
    /// Connections the attacker opened (the car accepted or refused them).
    private let connections = Atomic<Int>(0)
    private let thread = Mutex<SystemThread?>(nil)

    public init(_ attack: LinkAttack, socketPath: String) {
        self.attack = attack
        self.socketPath = socketPath
    }

    public func start() {
        let created = HarnessThread.start(self) { $0.run() }
        thread.withLock { $0 = created }
    }

    /// Stops and returns the tries made (frames, Hellos, or connections for the idle kinds).
    @discardableResult
    public func stop() -> Int {
        stopping.store(true, ordering: .relaxed)
        if let running = thread.withLock({ value -> SystemThread? in defer { value = nil }; return value }) {
            running.join()
        }
        return tries.load(ordering: .relaxed)
    }

    public var triesSoFar: Int { tries.load(ordering: .relaxed) }
    public var connectionsOpened: Int { connections.load(ordering: .relaxed) }

    // MARK: - The loop

    /// One attacker connection and when it next acts.
    private struct Held {
        let descriptor: FileDescriptor
        var nextActionMillis: UInt64
        var sent = 0
    }

    fileprivate func run() {
        var held: [Held] = []
        var nextBurst = OwnerProbe.nowMillis()
        let hello = helloBytes()
        while !stopping.load(ordering: .relaxed) {
            let now = OwnerProbe.nowMillis()
            switch attack {
            case .malformedBursts(let burst, let every):
                if now >= nextBurst {
                    sendBurst(burst)
                    nextBurst = now + every
                }
            case .silentConnections(let count):
                refill(&held, to: count, now: now)
            case .trickledHalfFrames(let count, let every):
                refill(&held, to: count, now: now)
                for index in held.indices where now >= held[index].nextActionMillis {
                    // Header 00 40 (64 bytes follow), then body bytes one at a time; never more
                    // than 60 of them, so the frame never completes.
                    let frame: Bytes = [0x00, 0x40] + Bytes(repeating: 0x01, count: 60)
                    if held[index].sent < frame.count {
                        _ = try? held[index].descriptor.sendSome(frame[held[index].sent...].prefix(1))
                        held[index].sent += 1
                        tries.add(1, ordering: .relaxed)
                    }
                    held[index].nextActionMillis = now + every
                }
            case .helloFlood(_, let links, let every):
                refill(&held, to: links, now: now)
                for index in held.indices where now >= held[index].nextActionMillis {
                    if let bytes = hello, (try? held[index].descriptor.sendSome(bytes[...])) ?? 0 > 0 {
                        tries.add(1, ordering: .relaxed)
                    }
                    held[index].nextActionMillis = now + every
                }
            }
            drainAndReap(&held)
            sleepMillis(2)
        }
        for connection in held { connection.descriptor.close() }
    }

    private func sendBurst(_ burst: Int) {
        guard let descriptor = open() else { return }
        defer { descriptor.close() }
        // A Hello type byte with a version and nothing else: truncated, `malformedMessage`.
        let frame: Bytes = [0x00, 0x03, MessageType.hello.rawValue, 0x01, 0x00]
        for _ in 0..<burst {
            guard ((try? descriptor.sendSome(frame[...])) ?? 0) > 0 else { break }
            tries.add(1, ordering: .relaxed)
        }
        // Read what the car answered so the burst is really processed before the close.
        _ = try? Poll.wait([(descriptor, .readable)], timeoutMillis: 20)
        _ = try? descriptor.receive(upTo: 8192)
    }

    private func refill(_ held: inout [Held], to count: Int, now: UInt64) {
        while held.count < count, let descriptor = open() {
            held.append(Held(descriptor: descriptor, nextActionMillis: now))
            if case .silentConnections = attack { tries.add(1, ordering: .relaxed) }
        }
    }

    /// Reads whatever the car sent (faults) and drops connections the car closed.
    private func drainAndReap(_ held: inout [Held]) {
        held.removeAll { connection in
            var closed = false
            reading: while true {
                guard let result = try? connection.descriptor.receive(upTo: 4096) else { closed = true; break reading }
                switch result {
                case .data: continue reading
                case .wouldBlock: break reading
                case .closed: closed = true; break reading
                }
            }
            if closed { connection.descriptor.close() }
            return closed
        }
    }

    private func open() -> FileDescriptor? {
        guard let descriptor = try? UnixSocket.connect(path: socketPath) else { return nil }
        let flags = fcntl(descriptor.rawValue, F_GETFL)
        _ = fcntl(descriptor.rawValue, F_SETFL, flags | O_NONBLOCK)
        connections.add(1, ordering: .relaxed)
        return descriptor
    }

    /// A framed Hello for the flood: a valid point as the ephemeral key (the same one each
    /// time: the attacker wants the car's signature work, not its own).
    private func helloBytes() -> Bytes? {
        guard case .helloFlood(let keyID, _, _) = attack,
              let ephemeral = try? P256PrivateKey.generate(),
              let hello = try? HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral.publicKey.sec1) else { return nil }
        return try? LinkFraming.frame(hello.encoded())
    }

    private func sleepMillis(_ millis: UInt64) {
        var request = timespec(tv_sec: 0, tv_nsec: Int(millis) * 1_000_000)
        nanosleep(&request, nil)
    }
}

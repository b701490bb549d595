// The car's end of the simulated BLE link: a Unix stream socket where each connection is one
// link (one LinkID, never reused) carrying framed characteristic writes. Non-blocking and
// driven by the caller's poll loop: `pollSet()`, Poll.wait, then `process(_:nowMillis:)`.
import Protocol

public final class SimulatedLinkServer: LinkServer {
    public struct Configuration: Sendable {
        public var socketPath: String
        /// Connections at once; one more is told `busy` (a cleartext Fault) and closed.
        public var maxConnections: Int = 8
        /// Connections accepted beyond `maxConnections` for the agent to decide about: it then
        /// closes a link without a session (or the newcomer) at once, so a full car reclaims
        /// an idle slot instead of refusing a phone. 0: the server refuses by itself.
        public var spareSlots: Int = 0
        /// Largest read per connection per loop turn (fairness between links).
        public var readChunk: Int = 4096
        /// Unsent bytes a link may queue; a peer that stops reading beyond this is closed.
        public var maxPendingOutput: Int = 16 * (LinkFraming.headerLength + LinkFraming.maxMessageLength)

        public init(socketPath: String) { self.socketPath = socketPath }
    }

    public typealias CloseReason = LinkCloseReason
    public typealias Event = LinkEvent

    private struct Connection {
        let descriptor: FileDescriptor
        var assembler = LinkFrameAssembler()
        var output: Bytes = []
        let connectedAtMillis: UInt64
    }

    private enum Slot { case listener, link(LinkID) }

    public let configuration: Configuration
    private let listener: FileDescriptor
    private let listenerInode: UInt64
    private var connections: [LinkID: Connection] = [:]
    private var nextLink: UInt64 = 1
    private var lastPollOrder: [Slot] = []
    private var isShutDown = false

    /// Binds the socket (mode 0600; a stale one is replaced, a live one is an error).
    public init(configuration: Configuration) throws(Errno) {
        self.configuration = configuration
        listener = try UnixSocket.listen(path: configuration.socketPath, mode: 0o600)
        listenerInode = UnixSocket.inode(of: configuration.socketPath) ?? 0
    }

    /// Open links, oldest first.
    public var links: [LinkID] { connections.keys.sorted { $0.rawValue < $1.rawValue } }

    /// Whether `link` is still connected (messages already read for a closed link are moot).
    public func isOpen(_ link: LinkID) -> Bool { connections[link] != nil }

    /// When `link` connected (the `nowMillis` of the `process` call that accepted it).
    public func connectedAt(_ link: LinkID) -> UInt64? { connections[link]?.connectedAtMillis }

    public var endpointDescription: String { "unix:" + configuration.socketPath }
    public var maxConnections: Int { configuration.maxConnections }

    /// A Unix socket has no radio facts: no address, RSSI or MTU.
    public func facts(of link: LinkID) -> LinkFacts? {
        connections[link].map { LinkFacts(transport: "unix", connectedAtMillis: $0.connectedAtMillis) }
    }

    /// Everything happens on descriptors.
    public func nextDeadline() -> UInt64? { nil }

    /// What to poll: the listener, and every link (writable too while it has queued output).
    public func pollSet() -> [(FileDescriptor, PollEvents)] {
        lastPollOrder = [.listener] + links.map { .link($0) }
        return lastPollOrder.map { slot in
            switch slot {
            case .listener: return (listener, .readable)
            case .link(let link):
                let connection = connections[link]!
                return (connection.descriptor, connection.output.isEmpty ? .readable : [.readable, .writable])
            }
        }
    }

    /// Handles the poll results for the last `pollSet()`, in the same order.
    public func process(_ results: [PollEvents], nowMillis: UInt64) -> [Event] {
        var events: [Event] = []
        var listenerReady = false
        // Links first: a phone that hung up and at once reconnects finds its old slot free in
        // the same round, instead of being refused busy behind its own closed connection.
        for (slot, ready) in zip(lastPollOrder, results) where !ready.isEmpty {
            switch slot {
            case .listener: listenerReady = true
            case .link(let link): events += service(link, ready: ready)
            }
        }
        if listenerReady { events += acceptPending(nowMillis: nowMillis) }
        return events
    }

    /// Frames and sends `message` (queuing what the socket does not take at once). Returns the
    /// close event if the link had to be dropped; nil otherwise (also for an unknown link).
    public func send(_ message: Bytes, to link: LinkID) -> Event? {
        guard connections[link] != nil else { return nil }
        let frame: Bytes
        do throws(LinkFrameError) { frame = try LinkFraming.frame(message) } catch { return drop(link, .malformedFrame(error.description)) }
        connections[link]!.output += frame
        if let reason = flush(link) { return drop(link, reason) }
        return nil
    }

    /// Closes `link` after one last attempt to send its queued output. No event follows.
    public func close(_ link: LinkID) {
        guard connections[link] != nil else { return }
        _ = flush(link)
        connections.removeValue(forKey: link)?.descriptor.close()
    }

    /// Closes every link and the listener, and removes the socket file if it is still ours.
    /// Once: a second call does nothing (the listener's number may belong to another file by then).
    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        links.forEach(close)
        listener.close()
        if UnixSocket.inode(of: configuration.socketPath) == listenerInode {
            UnixSocket.remove(configuration.socketPath)
        }
    }

    private func acceptPending(nowMillis: UInt64) -> [Event] {
        var events: [Event] = []
        let hardCap = configuration.maxConnections + max(0, configuration.spareSlots)
        // Bounded: a flood of connections is handled a few per loop turn.
        for _ in 0..<(configuration.maxConnections + 1) {
            // With spare slots, a connection that would go over the hard cap waits in the
            // backlog: the agent frees a slot for it when it handles this round's newcomer.
            // Only a server already at its hard cap (an agent that frees nothing) refuses.
            if configuration.spareSlots > 0, connections.count >= configuration.maxConnections, !events.isEmpty { break }
            guard let accepted = try? listener.acceptConnection() else { break }
            if connections.count >= hardCap {
                if let frame = try? LinkFraming.frame(FaultMessage(.busy).encoded()) {
                    _ = try? accepted.sendSome(frame[...])
                }
                accepted.close()
                events.append(.refusedBusy)
                continue
            }
            let link = LinkID(nextLink)
            nextLink += 1
            connections[link] = Connection(descriptor: accepted, connectedAtMillis: nowMillis)
            events.append(.connected(link))
        }
        return events
    }

    private func service(_ link: LinkID, ready: PollEvents) -> [Event] {
        guard let connection = connections[link] else { return [] }
        if ready.contains(.writable), let reason = flush(link) { return [drop(link, reason)] }
        guard !ready.isDisjoint(with: [.readable, .hangUp, .error, .invalid]) else { return [] }
        let received: SocketReceive
        do throws(Errno) {
            received = try connection.descriptor.receive(upTo: configuration.readChunk)
        } catch {
            return [drop(link, .ioError(error.description))]
        }
        switch received {
        case .wouldBlock: return []
        case .closed: return [drop(link, .peerClosed)]
        case .data(let bytes):
            do throws(LinkFrameError) {
                let messages = try connections[link]!.assembler.append(bytes)
                return messages.map { .message(link, $0) }
            } catch {
                return [drop(link, .malformedFrame(error.description))]
            }
        }
    }

    /// Writes queued output; a reason to drop the link, or nil.
    private func flush(_ link: LinkID) -> CloseReason? {
        guard var connection = connections[link] else { return nil }
        defer { connections[link] = connection }
        while !connection.output.isEmpty {
            let sent: Int
            do throws(Errno) { sent = try connection.descriptor.sendSome(connection.output[...]) } catch { return .ioError(error.description) }
            if sent == 0 { break }
            connection.output.removeFirst(sent)
        }
        return connection.output.count > configuration.maxPendingOutput ? .outputOverflow : nil
    }

    private func drop(_ link: LinkID, _ reason: CloseReason) -> Event {
        connections.removeValue(forKey: link)?.descriptor.close()
        return .closed(link, reason)
    }
}

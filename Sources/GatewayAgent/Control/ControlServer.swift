// DIR/control.sock: the control line protocol (ControlProtocol) on a Unix stream socket, mode
// 0600, for the agent's own user (and root) only: the kernel's SO_PEERCRED for each connection
// must name our effective user ID or 0, whatever the file mode says. A LoopSource: polled with
// everything else on the agent's thread; every connection is bounded in count, line length,
// queued output and idle time.
import Drivers
import Protocol

/// Who may use the control socket.
enum ControlAccess {
    static func allows(peerUserID: UInt32, ownUserID: UInt32) -> Bool {
        peerUserID == ownUserID || peerUserID == 0
    }
}

final class ControlServer: LoopSource {
    struct Configuration {
        var socketPath: String
        var maxConnections = 4
        /// A connection with no request for this long is closed.
        var idleTimeoutMillis: UInt64 = 10_000
        var maxPendingOutput = 64 * 1024
    }

    typealias Handler = (String) -> ControlResponse

    private struct Connection {
        let descriptor: FileDescriptor
        var assembler = LineAssembler(maxLineBytes: ControlProtocol.maxLineBytes)
        var output: Bytes = []
        var lastActivityMillis: UInt64
        /// Close once the output is flushed (after an overlong line).
        var closeAfterFlush = false
    }

    let configuration: Configuration
    private let listener: FileDescriptor
    private let listenerInode: UInt64
    private let handler: Handler
    private let log: AgentLog
    private var connections: [Int: Connection] = [:]
    private var nextID = 1
    private var lastPollOrder: [Int] = []

    /// DIR/control.sock, answered by `commands`.
    convenience init(stateDirectory: String, log: AgentLog, commands: ControlCommands) throws(Errno) {
        try self.init(configuration: Configuration(socketPath: stateDirectory + "/" + ControlProtocol.socketFileName),
                      log: log, handler: { commands.execute($0) })
    }

    init(configuration: Configuration, log: AgentLog, handler: @escaping Handler) throws(Errno) {
        self.configuration = configuration
        self.handler = handler
        self.log = log
        listener = try UnixSocket.listen(path: configuration.socketPath, mode: 0o600)
        listenerInode = UnixSocket.inode(of: configuration.socketPath) ?? 0
    }

    var socketPath: String { configuration.socketPath }

    /// The listener (id 0) and every connection, writable too while output is queued.
    func pollSet() -> [(FileDescriptor, PollEvents)] {
        lastPollOrder = [0] + connections.keys.sorted()
        return lastPollOrder.map { id in
            guard let connection = connections[id] else { return (listener, .readable) }
            return (connection.descriptor, connection.output.isEmpty ? .readable : [.readable, .writable])
        }
    }

    /// The next idle timeout, if a connection is open.
    func nextDeadline() -> UInt64? {
        connections.values.map { $0.lastActivityMillis + configuration.idleTimeoutMillis }.min()
    }

    /// Handles the poll results for the last `pollSet()`, in the same order, then closes
    /// connections that stayed idle too long.
    func process(_ results: [PollEvents], nowMillis: UInt64) {
        for (id, ready) in zip(lastPollOrder, results) where !ready.isEmpty {
            if id == 0 { acceptPending(nowMillis: nowMillis) } else { service(id, ready: ready, nowMillis: nowMillis) }
        }
        for (id, connection) in connections where nowMillis >= connection.lastActivityMillis + configuration.idleTimeoutMillis {
            close(id)
        }
    }

    func shutdown() {
        connections.keys.forEach(close)
        listener.close()
        if UnixSocket.inode(of: configuration.socketPath) == listenerInode { UnixSocket.remove(configuration.socketPath) }
    }

    private func acceptPending(nowMillis: UInt64) {
        for _ in 0...configuration.maxConnections {
            guard let accepted = try? listener.acceptConnection() else { return }
            let peer: PeerCredentials
            do throws(Errno) { peer = try accepted.peerCredentials() } catch {
                accepted.close()
                continue
            }
            guard ControlAccess.allows(peerUserID: peer.userID, ownUserID: FileDescriptor.effectiveUserID) else {
                log.info("control: refused a connection from uid \(peer.userID) (pid \(peer.processID))")
                refuse(accepted, "permission denied")
                continue
            }
            guard connections.count < configuration.maxConnections else {
                refuse(accepted, "busy")
                continue
            }
            connections[nextID] = Connection(descriptor: accepted, lastActivityMillis: nowMillis)
            nextID += 1
        }
    }

    private func refuse(_ descriptor: FileDescriptor, _ reason: String) {
        _ = try? descriptor.sendSome(Bytes((ControlProtocol.errorPrefix + reason + "\n").utf8)[...])
        descriptor.close()
    }

    private func service(_ id: Int, ready: PollEvents, nowMillis: UInt64) {
        guard var connection = connections[id] else { return }
        if ready.contains(.writable), !flush(id) { return }
        guard !ready.isDisjoint(with: [.readable, .hangUp, .error, .invalid]) else { return }
        let received: SocketReceive
        do throws(Errno) { received = try connection.descriptor.receive(upTo: 1024) } catch {
            close(id)
            return
        }
        switch received {
        case .wouldBlock: return
        case .closed: close(id); return
        case .data(let bytes):
            connection.lastActivityMillis = nowMillis
            let events = connection.assembler.feed(bytes)
            connections[id] = connection
            for event in events where connections[id]?.closeAfterFlush == false {
                switch event {
                case .line(let line):
                    let trimmed = String(line.drop(while: { $0 == " " }))
                    if trimmed.isEmpty { continue }
                    queue(handler(trimmed).wireLines, for: id)
                case .tooLong:
                    queue(ControlResponse.failure("line longer than \(ControlProtocol.maxLineBytes) bytes").wireLines, for: id)
                    connections[id]?.closeAfterFlush = true
                }
            }
            _ = flush(id)
        }
    }

    private func queue(_ lines: [String], for id: Int) {
        connections[id]?.output += Bytes(lines.map { $0 + "\n" }.joined().utf8)
    }

    /// Writes queued output; false when the connection was closed.
    private func flush(_ id: Int) -> Bool {
        guard var connection = connections[id] else { return false }
        while !connection.output.isEmpty {
            let sent: Int
            do throws(Errno) { sent = try connection.descriptor.sendSome(connection.output[...]) } catch {
                close(id)
                return false
            }
            if sent == 0 { break }
            connection.output.removeFirst(sent)
        }
        connections[id] = connection
        if connection.output.count > configuration.maxPendingOutput || (connection.output.isEmpty && connection.closeAfterFlush) {
            close(id)
            return false
        }
        return true
    }

    private func close(_ id: Int) {
        connections.removeValue(forKey: id)?.descriptor.close()
    }
}

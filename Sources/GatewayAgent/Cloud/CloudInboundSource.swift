// Hands inbound cloud messages (a revocation, a request) to the agent's thread as soon as the
// cloud thread admits them: a LoopSource on the mailbox's eventfd, so the loop wakes for the
// message itself instead of finding it at the next once-a-second tick.
//
// Budgeted: at most `messagesPerTurn` messages per loop turn (each may cost a signature
// verification and a store write), the rest on the following turns. The loop serves phone
// links before its sources in every turn, so a flood of cloud input delays a phone by at
// most one budget's worth of work, never by the flood's length.
import Drivers

final class CloudInboundSource: LoopSource {
    /// A P-256 verification is about a millisecond on a Pi: a handful per turn keeps a turn short.
    static let messagesPerTurn = 4

    private let cloud: AgentCloud
    private let handler: CloudInboundHandler

    init(cloud: AgentCloud, handler: CloudInboundHandler) {
        self.cloud = cloud
        self.handler = handler
    }

    func pollSet() -> [(FileDescriptor, PollEvents)] { [(cloud.inboundArrived.descriptor, .readable)] }

    /// Due at once (any past time) while messages wait beyond this turn's budget.
    func nextDeadline() -> UInt64? { cloud.inboundWaiting ? 0 : nil }

    func process(_ ready: [PollEvents], nowMillis: UInt64) {
        // Drain before taking: a message posted after the take raises the descriptor again.
        if let events = ready.first, !events.isEmpty { cloud.inboundArrived.drain() }
        for message in cloud.takeInbound(limit: Self.messagesPerTurn) { handler.handle(message) }
    }
}

// Hands inbound cloud messages (a revocation, a request) to the agent's thread as soon as the
// cloud thread admits them: a LoopSource on the mailbox's eventfd, so the loop wakes for the
// message itself instead of finding it at the next once-a-second tick.
import Drivers

final class CloudInboundSource: LoopSource {
    private let cloud: AgentCloud
    private let handler: CloudInboundHandler

    init(cloud: AgentCloud, handler: CloudInboundHandler) {
        self.cloud = cloud
        self.handler = handler
    }

    func pollSet() -> [(FileDescriptor, PollEvents)] { [(cloud.inboundArrived.descriptor, .readable)] }

    func nextDeadline() -> UInt64? { nil }

    func process(_ ready: [PollEvents], nowMillis: UInt64) {
        guard let events = ready.first, !events.isEmpty else { return }
        // Drain before taking: a message posted after the take raises the descriptor again.
        cloud.inboundArrived.drain()
        for message in cloud.takeInbound() { handler.handle(message) }
    }
}

// Decides which outbox message an audit event becomes. Installed on CarStore by the agent.

public typealias EventRouter = @Sendable (StoredEvent) -> OutboxEntry?

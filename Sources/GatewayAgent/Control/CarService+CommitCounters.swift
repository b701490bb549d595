// The `stats` command's group-commit figures come from the loop's audit batch: commits of the
// agent's own rows, and the rows they carried (rows per commit is the group-commit factor).

extension CarService: AgentCommitCounters {
    var commits: UInt64 { UInt64(auditStats.commits) }
    var eventsCommitted: UInt64 { UInt64(auditStats.rows) }
}

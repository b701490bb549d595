// The effective settings as `config` on the console shows them. Secrets are masked: the service
// PIN shows only whether it is set; files holding secrets (TLS keys) are shown by path, never
// by content. Add a line here for every new setting.

extension AgentConfig {
    func displayLines(consoleEndpoint: String) -> [String] {
        // Built a line at a time: one array literal of this many concatenations is more than
        // Swift 6.0's type checker solves in reasonable time.
        var lines: [String] = []
        lines.append("config file: " + (sourcePath ?? "none (built-in defaults and flags)"))
        lines.append("vehicleID: " + (vehicleID?.description ?? "-"))
        lines.append("stateDirectory: " + (stateDirectory ?? "-"))
        lines.append("board: " + (boardFile ?? "built-in simulated board"))
        let nowLevel = LogLevel.threshold == logLevel ? "" : " (now \(LogLevel.threshold.rawValue))"
        lines.append("logLevel: \(logLevel.rawValue)" + nowLevel)
        let ptyNote = consoleDevice == .pty ? " (\(consoleEndpoint))" : ""
        lines.append("console.tty: " + (consoleDevice?.description ?? "none") + ptyNote)
        lines.append("console.baud: \(consoleBaud)")
        lines.append("service.pin: " + (servicePIN == nil ? "not set (signed challenge only)" : servicePINEnabled ? "set (hidden)" : "set (hidden), turned off (pinEnabled false)"))
        lines.append("service.timeoutSeconds: \(serviceTimeoutSeconds)")
        lines.append("service.challengeSeconds: \(serviceChallengeSeconds)")
        lines.append("vault: " + vault.displayText)
        lines.append("mqtt.url: " + (cloud.map { $0.endpoints.map(\.description).joined(separator: ", ") } ?? "none (offline)"))
        let tlsFiles: String = cloud?.tls.map { tls in [tls.caFile, tls.certificateFile ?? "-", tls.keyFile ?? "-"].joined(separator: " / ") } ?? "-"
        lines.append("mqtt.ca / cert / key: " + tlsFiles)
        lines += StoreSettings.displayLines(store)
        lines += link.displayLines()
        lines.append("audit.routineRecordsPerKeyPerMinute: \(auditRoutinePerMinute ?? AuditSettings.defaultPerMinute)")
        return lines
    }
}

// The effective settings as `config` on the console shows them. Secrets are masked: the service
// PIN shows only whether it is set; files holding secrets (TLS keys) are shown by path, never
// by content. Add a line here for every new setting. The cloud link is shown as the agent runs
// it (the file's "mqtt" object with the --mqtt flags on top), once: the file alone would say
// "offline" for a car started with --mqtt.

extension AgentConfig {
    /// `cloud`: the cloud link in force (flags included), nil when the car runs offline.
    func displayLines(consoleEndpoint: String, cloud: CloudOptions?) -> [String] {
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
        if let cloud {
            lines.append("mqtt.url: " + cloud.endpoints.map(\.description).joined(separator: ", "))
            let tlsFiles: String = cloud.tls.map { tls in [tls.caFile, tls.certificateFile ?? "-", tls.keyFile ?? "-"].joined(separator: " / ") } ?? "-"
            lines.append("mqtt.ca / cert / key: " + tlsFiles + (cloud.tls == nil ? "" : " (contents not shown)"))
            lines.append("mqtt.keepaliveSeconds: \(cloud.keepaliveSeconds)")
            lines.append("mqtt.willDelaySeconds: \(cloud.willDelaySeconds)")
        } else {
            lines.append("mqtt.url: none (the car runs offline)")
        }
        lines += StoreSettings.displayLines(store)
        lines += link.displayLines()
        lines.append("audit.routineRecordsPerKeyPerMinute: \(auditRoutinePerMinute ?? AuditSettings.defaultPerMinute)")
        return lines
    }
}

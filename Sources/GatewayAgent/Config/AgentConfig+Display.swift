// The effective settings as `config` on the console shows them. Secrets are masked: the service
// PIN shows only whether it is set; files holding secrets (TLS keys) are shown by path, never
// by content. Add a line here for every new setting.

extension AgentConfig {
    func displayLines(consoleEndpoint: String) -> [String] {
        [
            "config file: " + (sourcePath ?? "none (built-in defaults and flags)"),
            "vehicleID: " + (vehicleID?.description ?? "-"),
            "stateDirectory: " + (stateDirectory ?? "-"),
            "board: " + (boardFile ?? "built-in simulated board"),
            "logLevel: \(logLevel.rawValue)" + (LogLevel.threshold == logLevel ? "" : " (now \(LogLevel.threshold.rawValue))"),
            "console.tty: " + (consoleDevice?.description ?? "none") + (consoleDevice == .pty ? " (\(consoleEndpoint))" : ""),
            "console.baud: \(consoleBaud)",
            "service.pin: " + (servicePIN == nil ? "not set (service mode disabled)" : "set (hidden)"),
            "service.timeoutSeconds: \(serviceTimeoutSeconds)",
            "mqtt.url: " + (cloud.map { $0.endpoint.description } ?? "none (offline)"),
            "mqtt.ca / cert / key: " + (cloud?.tls.map { [$0.caFile, $0.certificateFile ?? "-", $0.keyFile ?? "-"].joined(separator: " / ") } ?? "-"),
        ] + StoreSettings.displayLines(store)
            + link.displayLines()
            + ["audit.routineRecordsPerKeyPerMinute: \(auditRoutinePerMinute ?? AuditSettings.defaultPerMinute)"]
    }
}

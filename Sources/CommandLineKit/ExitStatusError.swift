/// A runtime error with its own exit status instead of 1: for a failure a supervisor must not
/// retry (systemd's RestartPreventExitStatus=), such as a key token refusing the PIN, where
/// every automatic restart would spend one of the token's few tries.
public protocol ExitStatusError: Error {
    var exitStatus: Int32 { get }
}

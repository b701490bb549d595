/// Build metadata shared by every OpenCarKey executable.
/// The single source of truth for the version string (`carkey-agent --version`, `carkey --version`).
public enum BuildInfo {
    public static let version = "0.1.0"
}

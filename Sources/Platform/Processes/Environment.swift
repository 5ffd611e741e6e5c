#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment variables, read with getenv(3): the log level, journald's stream,
/// the feeds' API keys.
public enum Environment {
    /// The value of `name`; nil when it is not set (an empty value is returned as "").
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder that holds what outlives a process (`pricealert.sqlite`, `pricealert.lock`).
///
/// `--state DIR` wins; otherwise `$STATE_DIRECTORY` (systemd's `StateDirectory=`), else
/// `$XDG_STATE_HOME/pricealert`, else `~/.local/state/pricealert`.
public struct StateFolder: Sendable, Equatable, CustomStringConvertible {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public var description: String { path }

    /// The folder to use for `explicit` (the `--state` value, nil when not given).
    public static func resolve(explicit: String?, environment: [String: String]) throws(StateError) -> StateFolder {
        if let explicit, !explicit.isEmpty { return StateFolder(path: explicit) }
        if let systemd = environment["STATE_DIRECTORY"], !systemd.isEmpty {
            // systemd joins several StateDirectory= entries with ':'; the first is ours.
            return StateFolder(path: String(systemd.split(separator: ":").first ?? Substring(systemd)))
        }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return StateFolder(path: xdg + "/pricealert")
        }
        guard let home = environment["HOME"], !home.isEmpty else {
            throw StateError(
                path: "~/.local/state/pricealert",
                reason: "HOME is not set; give --state DIR")
        }
        return StateFolder(path: home + "/.local/state/pricealert")
    }

    /// The process environment, for `resolve`.
    public static var processEnvironment: [String: String] {
        var result: [String: String] = [:]
        for name in ["STATE_DIRECTORY", "XDG_STATE_HOME", "HOME"] {
            if let value = getenv(name) { result[name] = String(cString: value) }
        }
        return result
    }

    /// The folder `explicit` names (nil: the default one for this process's environment), or
    /// nil when it cannot be named; opening it through `resolve` then says why.
    public static func named(_ explicit: String?) -> StateFolder? {
        try? resolve(explicit: explicit, environment: processEnvironment)
    }

    /// Whether the folder holds a database already (every run after the first).
    public var hasDatabase: Bool { access(databasePath, F_OK) == 0 }

    public var databasePath: String { path + "/pricealert.sqlite" }
    public var lockPath: String { path + "/pricealert.lock" }

    /// Creates the folder (and missing parents) with mode 0700; an existing folder is kept as is
    /// but must be a readable, writable folder.
    public func create() throws(StateError) {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw StateError(path: path, reason: "cannot create \(partial): \(Self.describe(errno))")
            }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw StateError(path: path, reason: Self.describe(errno)) }
        guard (info.st_mode & 0o170000) == 0o040000 else { throw StateError(path: path, reason: "not a folder") }
        guard access(path, R_OK | W_OK | X_OK) == 0 else {
            throw StateError(path: path, reason: "not readable and writable by this user (\(Self.describe(errno)))")
        }
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// The state folder cannot be used. `description` is the whole message and names the folder.
public struct StateError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let reason: String
    /// Set when another process holds the lock.
    public let lockedBy: Int32?
    /// Set when the database was written by a newer pricealert.
    public let newerSchema: Int?

    public init(path: String, reason: String, lockedBy: Int32? = nil, newerSchema: Int? = nil) {
        self.path = path
        self.reason = reason
        self.lockedBy = lockedBy
        self.newerSchema = newerSchema
    }

    public var description: String {
        if let pid = lockedBy { return "\(path) is in use by another pricealert (pid \(pid))" }
        if let schema = newerSchema { return "state in \(path) was written by a newer pricealert (schema \(schema))" }
        return "state folder \(path): \(reason)"
    }
}

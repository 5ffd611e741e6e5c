import Platform

#if canImport(Glibc)
import Glibc
#endif

/// The systemd notification protocol (sd_notify(3)) without libsystemd: each message is one
/// datagram of `KEY=VALUE` lines sent to the AF_UNIX socket named by `$NOTIFY_SOCKET` (a path,
/// or an abstract name written with a leading `@`). Without `$NOTIFY_SOCKET` every call does
/// nothing, so the same binary runs under systemd (`Type=notify`), another supervisor, or a shell.
///
/// Sending never blocks: a receiver whose queue is full (a datagram socket holds only
/// `net.unix.max_dgram_qlen` messages) gets an error, not a stalled thread. A notification that
/// cannot be delivered is worth a log line at most, never a stopped or stuck daemon.
public struct ServiceNotifier: Sendable {
    /// The socket from `$NOTIFY_SOCKET`, or nil when notifications are off.
    public let socket: String?
    /// How often to send `WATCHDOG=1`: half of `$WATCHDOG_USEC`, as sd_watchdog_enabled(3)
    /// advises; nil when systemd set no watchdog for this process (`$WATCHDOG_PID` names another).
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
    public init(environment: [String: String], pid: Int32 = getpid()) {
        let socket = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        self.socket = socket
        var interval: Duration?
        if socket != nil, let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0,
            environment["WATCHDOG_PID"].map({ Int32($0) == pid }) ?? true
        {
            interval = .microseconds(usec / 2)
        }
        watchdogInterval = interval
    }

    /// The process environment's settings.
    public static func fromProcessEnvironment() -> ServiceNotifier {
        var environment: [String: String] = [:]
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = Environment.value(name) { environment[name] = value }
        }
        return ServiceNotifier(environment: environment)
    }

    /// Startup is complete: systemd moves a `Type=notify` unit to "active" and starts its watchdog.
    public func ready(status: String) throws(NotifyError) {
        try send(["READY=1", Self.status(status)])
    }

    /// Keep-alive: systemd restarts the unit when none arrives within `WatchdogSec`.
    public func watchdog() throws(NotifyError) {
        try send(["WATCHDOG=1"])
    }

    /// Shutdown has begun (systemd shows "deactivating" instead of waiting blindly).
    public func stopping(status: String) throws(NotifyError) {
        try send(["STOPPING=1", Self.status(status)])
    }

    /// One line of free text that `systemctl status` shows.
    public func status(_ text: String) throws(NotifyError) {
        try send([Self.status(text)])
    }

    /// Sends `lines` as one datagram. Does nothing without `$NOTIFY_SOCKET`.
    public func send(_ lines: [String]) throws(NotifyError) {
        guard let socket else { return }
        try Self.send(lines.joined(separator: "\n"), to: socket)
    }

    /// `STATUS=` takes one line: newlines would start new assignments.
    static func status(_ text: String) -> String {
        "STATUS=" + text.map { $0.isNewline ? " " : String($0) }.joined()
    }

    static func send(_ message: String, to path: String) throws(NotifyError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 } // Linux abstract namespace: a leading NUL, no terminator
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw NotifyError(socket: path, reason: "socket path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if !abstract { raw[bytes.count] = 0 }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))

        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NotifyError(socket: path, reason: Self.errnoText()) }
        defer { close(fd) }
        let sent = message.utf8CString.withUnsafeBufferPointer { text in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, text.baseAddress, text.count - 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), $0, length)
                }
            }
        }
        guard sent >= 0 else { throw NotifyError(socket: path, reason: Self.errnoText()) }
    }

    private static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}

/// A notification that could not be sent: the socket and why.
public struct NotifyError: Error, CustomStringConvertible {
    public var socket: String
    public var reason: String
    public var description: String { "cannot notify \(socket): \(reason)" }
}

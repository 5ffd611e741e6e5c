#if canImport(Glibc)
import Glibc
#endif

/// A real AF_UNIX datagram socket in the role of systemd's `$NOTIFY_SOCKET`: bound to a fresh
/// path under /tmp (or an abstract name), it collects the notifications sent to it.
public final class NotifySocket {
    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public var waitingFor: String
        public var received: [String]
        public var description: String { "no notification with \(waitingFor); received \(received)" }
    }

    /// What to put in `NOTIFY_SOCKET`: the path, or `@name` for an abstract socket.
    public let address: String
    private let fd: Int32
    private let path: String?
    /// Every datagram received so far, in order.
    public private(set) var messages: [String] = []

    public init(abstract: Bool = false) throws {
        let name = "pricealert-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = socket(
            AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failed(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes: [UInt8] = abstract ? [0] + Array(name.utf8) : Array("/tmp/\(name).sock".utf8) + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            close(fd)
            throw Failed(description: "bind: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        path = abstract ? nil : "/tmp/\(name).sock"
        self.address = abstract ? "@\(name)" : "/tmp/\(name).sock"
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }

    /// Reads what has arrived, without waiting.
    public func receive() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            messages.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        return messages
    }

    /// Waits up to `timeout` seconds for a message containing the line `line` (e.g. `READY=1`)
    /// and returns its index in `messages`.
    public func waitFor(line: String, after index: Int = -1, timeout: Double) async throws -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            _ = receive()
            if let found = messages.indices.first(where: {
                $0 > index && messages[$0].split(separator: "\n").contains(Substring(line))
            }) {
                return found
            }
            if ContinuousClock.now >= deadline { throw TimedOut(waitingFor: line, received: messages) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

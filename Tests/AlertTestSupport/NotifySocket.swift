import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real AF_UNIX datagram socket in the role of systemd's `$NOTIFY_SOCKET`: bound to a fresh
/// path under /tmp (or an abstract name), it collects the notifications sent to it. A thread of
/// its own reads them as they come, as systemd does: the kernel queues at most
/// `net.unix.max_dgram_qlen` datagrams (10 on Debian), and the daemon sends without waiting, so
/// a socket read only now and then would lose what came after the queue filled.
public final class NotifySocket: Sendable {
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
    private let path: String?
    private let reader: Reader

    /// The socket and what it received; `run` reads until `stopped`, then closes the socket.
    private final class Reader: Sendable {
        let fd: Int32
        let messages = Mutex<[String]>([])
        let stopped = Atomic(false)

        init(fd: Int32) { self.fd = fd }

        func run() {
            while !stopped.load(ordering: .relaxed) {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&ready, 1, 20)
                drain()
            }
            close(fd)
        }

        /// Takes every datagram waiting, in order (one reader at a time).
        func drain() {
            messages.withLock { messages in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { break }
                    messages.append(String(decoding: buffer[..<count], as: UTF8.self))
                }
            }
        }
    }

    /// Every datagram received so far, in order.
    public var messages: [String] { reader.messages.withLock { $0 } }

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
        path = abstract ? nil : "/tmp/\(name).sock"
        self.address = abstract ? "@\(name)" : "/tmp/\(name).sock"
        let reader = Reader(fd: fd)
        self.reader = reader
        Thread { reader.run() }.start()
    }

    deinit {
        reader.stopped.store(true, ordering: .relaxed)
        if let path { unlink(path) }
    }

    /// What has arrived so far, with whatever waits in the socket now.
    public func receive() -> [String] {
        reader.drain()
        return messages
    }

    /// Waits up to `timeout` seconds for a message containing the line `line` (e.g. `READY=1`)
    /// and returns its index in `messages`.
    public func waitFor(line: String, after index: Int = -1, timeout: Double) async throws -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            let messages = receive()
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

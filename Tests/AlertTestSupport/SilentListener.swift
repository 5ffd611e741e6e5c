import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 (a port the system picks) that accepts connections and never
/// answers: a peer that hangs, for tests of timeouts and cancellation. A request to it can end
/// only by the client's own doing, so a test needs no clock to show that a timeout fired.
/// Accepting runs on a thread of its own; `connections` gets an element for each connection.
public final class SilentListener: Sendable {
    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    /// One element per accepted connection; finished when the listener is closed.
    public let connections: AsyncStream<Void>
    private let fd: Int32
    private final class Accepted: Sendable {
        let fds = Mutex<[Int32]>([])
    }
    private let accepted = Accepted()

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failed(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            _ = Glibc.close(fd)
            throw Failed(description: "listen: \(reason)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        connections = stream
        let (listener, accepted) = (fd, accepted)
        Thread {
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    break
                }
                accepted.fds.withLock { $0.append(connection) }
                continuation.yield()
            }
            continuation.finish()
        }.start()
    }

    /// Stops listening and closes every accepted connection.
    public func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        _ = Glibc.close(fd)
        accepted.fds.withLock { connections in
            for connection in connections { _ = Glibc.close(connection) }
            connections = []
        }
    }
}

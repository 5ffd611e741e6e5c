import AlertHTTP
import AlertTestSupport
import Foundation
import Logging
import Operations
import Testing

/// The status server under connection floods: idle and slow connections on a real server.
@Suite("status server limits", .programs)
struct StatusServerLimitsTests {
    /// A TCP connection to 127.0.0.1:`port` that sends nothing (yet).
    private func connect(_ port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(rc == 0)
        return fd
    }

    /// Whether the server closed `fd` (end of file or reset); does not wait.
    private func isClosed(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    private func server(_ limits: StatusServer.Limits, logger: Logger = Logger(label: "test")) -> StatusServer {
        let (registry, _) = PrometheusMetrics.isolated()
        return StatusServer(
            host: "127.0.0.1", port: 0, registry: registry, status: FeedStatus(staleAfter: .seconds(30)),
            logger: logger, limits: limits
        ) {}
    }

    @Test func idleAndSlowConnectionsAreBoundedAndClosedAndHealthzStillAnswers() async throws {
        let server = server(StatusServer.Limits(maxConnections: 4, idleTimeout: .milliseconds(300)))
        let port = try await server.start()
        let idle = try (0..<10).map { _ in try connect(port) }
        // Slow clients: a request head that never ends, one byte at a time.
        let slow = try (0..<4).map { _ in try connect(port) }
        for fd in slow { _ = send(fd, "GET /healthz HTTP/1.1\r\n", 23, Int32(MSG_NOSIGNAL)) }
        defer { for fd in idle + slow { close(fd) } }

        var open = Set(idle + slow)
        let deadline = ContinuousClock.now + .seconds(60)
        while !open.isEmpty, ContinuousClock.now < deadline {
            #expect(server.openConnections <= 4)
            for fd in slow where open.contains(fd) { _ = send(fd, "X", 1, Int32(MSG_NOSIGNAL)) }
            open = open.filter { !isClosed($0) }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(open.isEmpty, "\(open.count) of 14 connections still open after 60 s")
        // Every connection was accepted and closed, never more than 4 open at once.
        #expect((1...4).contains(server.mostConnections), "\(server.mostConnections)")

        let http = CurlHTTPClient()
        defer { http.shutdown() }
        let response = try await http.send(HTTPRequest(url: "http://127.0.0.1:\(port)/healthz", timeout: 60_000))
        #expect(response.status == 503)
        #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("starting"))
        await server.stop()
    }

    @Test func healthzAnswersWhileTheLimitIsFull() async throws {
        let server = server(StatusServer.Limits(maxConnections: 2, idleTimeout: .milliseconds(300)))
        let port = try await server.start()
        let idle = try (0..<6).map { _ in try connect(port) }
        defer { for fd in idle { close(fd) } }
        let http = CurlHTTPClient()
        defer { http.shutdown() }
        // Waits in the backlog behind the idle connections, each closed after its timeout.
        let response = try await http.send(HTTPRequest(url: "http://127.0.0.1:\(port)/healthz", timeout: 60_000))
        #expect(response.status == 503)
        #expect(server.openConnections <= 2)
        await server.stop()
    }

    @Test func aNonLoopbackAddressIsWarnedAbout() async throws {
        let capture = CapturingLogHandler()
        let logger = capture.logger(label: "test")
        let (registry, _) = PrometheusMetrics.isolated()
        let status = FeedStatus(staleAfter: .seconds(30))
        let wide = StatusServer(host: "0.0.0.0", port: 0, registry: registry, status: status, logger: logger) {}
        _ = try await wide.start()
        await wide.stop()
        let local = StatusServer(host: "127.0.0.1", port: 0, registry: registry, status: status, logger: logger) {}
        _ = try await local.start()
        await local.stop()
        #expect(
            capture.records.filter { $0.level == .warning }.map(\.message) == [
                "--listen 0.0.0.0: not a loopback address; /metrics and /healthz have no authentication, so anyone who can reach it can read them"
            ])
    }
}

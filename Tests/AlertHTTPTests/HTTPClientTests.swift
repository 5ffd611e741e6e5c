import AlertHTTP
import AlertTestSupport
import Testing

/// Both clients (the feeds' SwiftNIO one, the webhooks' libcurl one) against a real Hummingbird
/// server on 127.0.0.1: the same requests give the same responses and the same errors.
@Suite struct HTTPClientTests {
    @Test(arguments: Transport.allCases)
    func getReturnsStatusBodyAndLowerCasedHeaders(_ transport: Transport) async throws {
        let client = transport.client
        let response = try await TestServer.with { port in
            try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/hello", timeout: 60_000))
        }
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, world")
        #expect(response.header("X-Test") == "yes")
        #expect(response.headers.contains { $0.name == "x-test" && $0.value == "yes" })
        #expect(response.header("content-type") == "text/plain")
        #expect(response.duration > 0)
    }

    @Test(arguments: Transport.allCases)
    func unknownPathIs404(_ transport: Transport) async throws {
        let client = transport.client
        let response = try await TestServer.with { port in
            try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/nowhere", timeout: 60_000))
        }
        #expect(response.status == 404)
    }

    @Test(arguments: Transport.allCases)
    func postBodyArrivesExactlyWithHeaders(_ transport: Transport) async throws {
        let client = transport.client
        let body: [UInt8] = Array(0...255) + [0, 0, 13, 10, 0] + Array("{\"a\":1}".utf8)
        let response = try await TestServer.with { port in
            try await client.send(
                HTTPRequest(
                    method: "POST", url: "http://127.0.0.1:\(port)/echo",
                    headers: [("X-Custom", "abc 123"), ("Content-Type", "application/octet-stream")], body: body,
                    timeout: 60_000))
        }
        #expect(response.status == 200)
        #expect(response.body == body)
        #expect(response.header("x-got-method") == "POST")
        #expect(response.header("x-got-custom") == "abc 123")
        #expect(response.header("x-got-content-type") == "application/octet-stream")
        #expect(response.header("x-got-expect") == "-")
        #expect(response.header("x-got-user-agent") == "pricealert/0.1")
    }

    @Test(arguments: Transport.allCases, ["PUT", "PATCH", "DELETE"])
    func otherMethodsReachTheServer(_ transport: Transport, method: String) async throws {
        let client = transport.client
        let response = try await TestServer.with { port in
            try await client.send(
                HTTPRequest(
                    method: method, url: "http://127.0.0.1:\(port)/echo",
                    body: method == "DELETE" ? [] : Array("x=\(method)".utf8), timeout: 60_000))
        }
        #expect(response.status == 200)
        #expect(response.header("x-got-method") == method)
        #expect(response.body == (method == "DELETE" ? [] : Array("x=\(method)".utf8)))
        // No made-up form content type when the caller gave none.
        #expect(response.header("x-got-content-type") == "-")
    }

    /// A redirect is an answer like any other: the caller sees the 3xx and its `Location`.
    @Test(arguments: Transport.allCases)
    func redirectsAreNotFollowed(_ transport: Transport) async throws {
        let client = transport.client
        let response = try await TestServer.with { port in
            try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/moved", timeout: 60_000))
        }
        #expect(response.status == 302)
        #expect(response.header("location") == "/hello")
        #expect(response.body.isEmpty)
    }

    @Test(arguments: Transport.allCases)
    func statusesAreClassified(_ transport: Transport) async throws {
        let client = transport.client
        let outcomes = try await TestServer.with { port in
            var outcomes: [HTTPOutcome] = []
            for path in ["status/429?retry-after=2", "status/503", "status/400", "status/204"] {
                let result = await client.result(HTTPRequest(url: "http://127.0.0.1:\(port)/\(path)", timeout: 60_000))
                outcomes.append(HTTPOutcome.classify(result, now: 0))
            }
            return outcomes
        }
        #expect(
            outcomes == [
                .retry(after: 2000, reason: "HTTP 429"),
                .retry(after: nil, reason: "HTTP 503"),
                .permanent(reason: "HTTP 400"),
                .success
            ])
    }

    /// The peer accepts and never answers: only the client's timeout can end the request.
    @Test(.timeLimit(.minutes(1)), arguments: Transport.allCases)
    func aPeerThatNeverAnswersTimesOut(_ transport: Transport) async throws {
        let client = transport.client
        let silent = try SilentListener()
        defer { silent.close() }
        let result = await client.result(HTTPRequest(url: "http://127.0.0.1:\(silent.port)/sleep", timeout: 300))
        guard case .failure(let error) = result else { Issue.record("expected a timeout, got \(result)"); return }
        #expect(error.kind == .timeout)
        guard case .retry = HTTPOutcome.classify(result, now: 0) else { Issue.record("timeout should retry"); return }
    }

    @Test(arguments: Transport.allCases)
    func closedPortIsConnectionRefused(_ transport: Transport) async throws {
        let client = transport.client
        let port = try await TestServer.with { port in port }
        let result = await client.result(HTTPRequest(url: "http://127.0.0.1:\(port)/hello", timeout: 60_000))
        guard case .failure(let error) = result else { Issue.record("expected refusal, got \(result)"); return }
        #expect(error.kind == .connectionRefused)
    }

    @Test(arguments: Transport.allCases)
    func errorsNeverShowTheSecretPartsOfTheURL(_ transport: Transport) async throws {
        let client = transport.client
        let port = try await TestServer.with { port in port }
        let url = "http://user:SECRETPASS@127.0.0.1:\(port)/secret-token/x?key=SECRET#SECRET"
        let result = await client.result(HTTPRequest(url: url, timeout: 60_000))
        guard case .failure(let error) = result else { Issue.record("expected an error"); return }
        for text in [error.description, error.url, error.reason, "\(error)", String(reflecting: error)] {
            #expect(!text.contains("SECRET"))
            #expect(!text.contains("secret-token"))
        }
        #expect(error.url.contains("127.0.0.1:\(port)"))
    }

    @Test(arguments: Transport.allCases)
    func fiftyConcurrentRequestsAllComplete(_ transport: Transport) async throws {
        let client = transport.client
        let bodies = try await TestServer.with { port in
            try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for i in 0..<50 {
                    group.addTask {
                        let response = try await client.send(
                            HTTPRequest(url: "http://127.0.0.1:\(port)/n/\(i)", timeout: 60_000))
                        #expect(response.status == 200)
                        return (i, String(decoding: response.body, as: UTF8.self))
                    }
                }
                var bodies: [Int: String] = [:]
                for try await (i, body) in group { bodies[i] = body }
                return bodies
            }
        }
        #expect(bodies.count == 50)
        #expect(bodies.allSatisfy { "\($0.key)" == $0.value })
    }

    /// The plain server does not speak TLS, so the handshake fails: the request fails as a TLS
    /// error, not by running out its time. Both timeouts are generous (libcurl's connect
    /// timeout covers the TLS handshake), so that a busy machine does not turn the one into the
    /// other.
    @Test(arguments: Transport.allCases)
    func httpsToAPlainServerIsATLSErrorNotATimeout(_ transport: Transport) async throws {
        let client = transport.client
        let result = try await TestServer.with { port in
            await client.result(
                HTTPRequest(url: "https://127.0.0.1:\(port)/hello", timeout: 60_000, connectTimeout: 60_000))
        }
        guard case .failure(let error) = result else { Issue.record("expected a TLS error, got \(result)"); return }
        #expect(error.kind == .tls || error.kind == .other)
        #expect(error.kind != .timeout)
    }

    @Test(arguments: Transport.allCases)
    func aMissingCAFileIsATLSError(_ transport: Transport) async throws {
        let client = transport.client
        let result = try await TestServer.with { port in
            await client.result(
                HTTPRequest(url: "https://127.0.0.1:\(port)/hello", caFile: "/nonexistent/pricealert-ca.pem"))
        }
        guard case .failure(let error) = result else { Issue.record("expected a TLS error, got \(result)"); return }
        #expect(error.kind == .tls)
        #expect(error.reason.contains("pricealert-ca.pem"), "the CA file was not used: \(error.reason)")
        guard case .permanent = HTTPOutcome.classify(result, now: 0) else {
            Issue.record("TLS errors are permanent"); return
        }
    }

    @Test(arguments: Transport.allCases)
    func invalidRequestsArePermanent(_ transport: Transport) async throws {
        let client = transport.client
        let bad = [
            HTTPRequest(method: "GET /x", url: "http://127.0.0.1:1/"),
            HTTPRequest(url: "http://127.0.0.1:1/", headers: [("X-A", "1\r\nX-Injected: 2")]),
            HTTPRequest(url: "ftp://127.0.0.1:1/file", timeout: 60_000)
        ]
        for request in bad {
            let result = await client.result(request)
            guard case .failure(let error) = result else { Issue.record("expected an error"); continue }
            #expect(error.isPermanent)
            guard case .permanent = HTTPOutcome.classify(result, now: 0) else { Issue.record("\(error)"); continue }
        }
    }

    /// Cancelled once the peer has the connection, the request ends at once as cancelled: the
    /// peer never answers and the request's own timeout is longer than the test may take.
    @Test(.timeLimit(.minutes(1)), arguments: Transport.allCases)
    func cancellingTheTaskEndsTheRequest(_ transport: Transport) async throws {
        let client = transport.client
        let silent = try SilentListener()
        defer { silent.close() }
        let task = Task {
            await client.result(HTTPRequest(url: "http://127.0.0.1:\(silent.port)/sleep", timeout: 600_000))
        }
        var connections = silent.connections.makeAsyncIterator()
        #expect(await connections.next() != nil)
        task.cancel()
        let result = await task.value
        guard case .failure(let error) = result else { Issue.record("expected cancellation"); return }
        #expect(error.reason == "request cancelled")
    }

    @Test func shutdownFailsLaterRequests() async throws {
        let client = CurlHTTPClient()
        client.shutdown()
        client.shutdown()
        await #expect(throws: HTTPError.self) {
            try await client.send(HTTPRequest(url: "http://127.0.0.1:1/", timeout: 60_000))
        }
    }
}

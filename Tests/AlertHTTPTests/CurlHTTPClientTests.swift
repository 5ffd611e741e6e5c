import AlertHTTP
import AlertTestSupport
import Testing

/// The libcurl client against a real Hummingbird server on 127.0.0.1.
@Suite struct CurlHTTPClientTests {
    let client = CurlHTTPClient()

    private func send(_ request: HTTPRequest) async -> Result<HTTPResponse, HTTPError> {
        do { return .success(try await client.send(request)) } catch { return .failure(error) }
    }

    @Test func getReturnsStatusBodyAndLowerCasedHeaders() async throws {
        let response = try await TestServer.with { port in
            try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/hello"))
        }
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, world")
        #expect(response.header("X-Test") == "yes")
        #expect(response.headers.contains { $0.name == "x-test" && $0.value == "yes" })
        #expect(response.header("content-type") == "text/plain")
        #expect(response.duration > 0)
    }

    @Test func unknownPathIs404() async throws {
        let response = try await TestServer.with { port in
            try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/nowhere"))
        }
        #expect(response.status == 404)
    }

    @Test func postBodyArrivesExactlyWithHeaders() async throws {
        let body: [UInt8] = Array(0...255) + [0, 0, 13, 10, 0] + Array("{\"a\":1}".utf8)
        let response = try await TestServer.with { port in
            try await client.send(HTTPRequest(
                method: "POST", url: "http://127.0.0.1:\(port)/echo",
                headers: [("X-Custom", "abc 123"), ("Content-Type", "application/octet-stream")], body: body))
        }
        #expect(response.status == 200)
        #expect(response.body == body)
        #expect(response.header("x-got-method") == "POST")
        #expect(response.header("x-got-custom") == "abc 123")
        #expect(response.header("x-got-content-type") == "application/octet-stream")
        #expect(response.header("x-got-expect") == "-")
        #expect(response.header("x-got-user-agent") == "pricealert/0.1")
    }

    @Test(arguments: ["PUT", "PATCH", "DELETE"])
    func otherMethodsReachTheServer(method: String) async throws {
        let response = try await TestServer.with { port in
            try await client.send(HTTPRequest(method: method, url: "http://127.0.0.1:\(port)/echo",
                                              body: method == "DELETE" ? [] : Array("x=\(method)".utf8)))
        }
        #expect(response.status == 200)
        #expect(response.header("x-got-method") == method)
        #expect(response.body == (method == "DELETE" ? [] : Array("x=\(method)".utf8)))
        // No made-up form content type when the caller gave none.
        #expect(response.header("x-got-content-type") == "-")
    }

    @Test func statusesAreClassified() async throws {
        let outcomes = try await TestServer.with { port in
            var outcomes: [HTTPOutcome] = []
            for path in ["status/429?retry-after=2", "status/503", "status/400", "status/204"] {
                let result = await send(HTTPRequest(url: "http://127.0.0.1:\(port)/\(path)"))
                outcomes.append(HTTPOutcome.classify(result, now: 0))
            }
            return outcomes
        }
        #expect(outcomes == [
            .retry(after: 2000, reason: "HTTP 429"),
            .retry(after: nil, reason: "HTTP 503"),
            .permanent(reason: "HTTP 400"),
            .success,
        ])
    }

    /// The peer accepts and never answers: only the client's timeout can end the request.
    @Test(.timeLimit(.minutes(1))) func aPeerThatNeverAnswersTimesOut() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let result = await send(HTTPRequest(url: "http://127.0.0.1:\(silent.port)/sleep", timeout: 300))
        guard case .failure(let error) = result else { Issue.record("expected a timeout, got \(result)"); return }
        #expect(error.kind == .timeout)
        guard case .retry = HTTPOutcome.classify(result, now: 0) else { Issue.record("timeout should retry"); return }
    }

    @Test func closedPortIsConnectionRefused() async throws {
        let port = try await TestServer.with { port in port }
        let result = await send(HTTPRequest(url: "http://127.0.0.1:\(port)/hello"))
        guard case .failure(let error) = result else { Issue.record("expected refusal, got \(result)"); return }
        #expect(error.kind == .connectionRefused)
    }

    @Test func errorsNeverShowTheSecretPartsOfTheURL() async throws {
        let port = try await TestServer.with { port in port }
        let url = "http://user:SECRETPASS@127.0.0.1:\(port)/secret-token/x?key=SECRET#SECRET"
        let result = await send(HTTPRequest(url: url))
        guard case .failure(let error) = result else { Issue.record("expected an error"); return }
        for text in [error.description, error.url, error.reason, "\(error)", String(reflecting: error)] {
            #expect(!text.contains("SECRET"))
            #expect(!text.contains("secret-token"))
        }
        #expect(error.url.contains("127.0.0.1:\(port)"))
    }

    @Test func fiftyConcurrentRequestsAllComplete() async throws {
        let bodies = try await TestServer.with { port in
            try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for i in 0..<50 {
                    group.addTask {
                        let response = try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/n/\(i)"))
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

    @Test func httpsToAPlainServerFailsQuickly() async throws {
        let result = try await TestServer.with { port in
            await send(HTTPRequest(url: "https://127.0.0.1:\(port)/hello", timeout: 5_000))
        }
        guard case .failure(let error) = result else { Issue.record("expected a TLS error, got \(result)"); return }
        #expect(error.kind == .tls || error.kind == .other)
        #expect(error.kind != .timeout)
    }

    @Test func aMissingCAFileIsATLSError() async throws {
        let result = try await TestServer.with { port in
            await send(HTTPRequest(url: "https://127.0.0.1:\(port)/hello", caFile: "/nonexistent/pricealert-ca.pem"))
        }
        guard case .failure(let error) = result else { Issue.record("expected a TLS error, got \(result)"); return }
        #expect(error.kind == .tls)
        #expect(error.reason.contains("pricealert-ca.pem"), "the CA file was not used: \(error.reason)")
        guard case .permanent = HTTPOutcome.classify(result, now: 0) else { Issue.record("TLS errors are permanent"); return }
    }

    @Test func invalidRequestsArePermanent() async throws {
        let bad = [
            HTTPRequest(method: "GET /x", url: "http://127.0.0.1:1/"),
            HTTPRequest(url: "http://127.0.0.1:1/", headers: [("X-A", "1\r\nX-Injected: 2")]),
            HTTPRequest(url: "ftp://127.0.0.1:1/file"),
        ]
        for request in bad {
            let result = await send(request)
            guard case .failure(let error) = result else { Issue.record("expected an error"); continue }
            #expect(error.isPermanent)
            guard case .permanent = HTTPOutcome.classify(result, now: 0) else { Issue.record("\(error)"); continue }
        }
    }

    /// Cancelled once the peer has the connection, the request ends at once as cancelled: the
    /// peer never answers and the request's own timeout is longer than the test may take.
    @Test(.timeLimit(.minutes(1))) func cancellingTheTaskEndsTheRequest() async throws {
        let silent = try SilentListener()
        defer { silent.close() }
        let task = Task { await send(HTTPRequest(url: "http://127.0.0.1:\(silent.port)/sleep", timeout: 600_000)) }
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
        await #expect(throws: HTTPError.self) { try await client.send(HTTPRequest(url: "http://127.0.0.1:1/")) }
    }
}

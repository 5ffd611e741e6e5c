import AlertHTTP
import Testing

@Suite struct HTTPOutcomeTests {
    private func outcome(_ status: Int, retryAfter: String? = nil) -> HTTPOutcome {
        let headers = retryAfter.map { [(name: "retry-after", value: $0)] } ?? []
        return HTTPOutcome.classify(
            .success(HTTPResponse(status: status, headers: headers, body: [], duration: 0)), now: 0)
    }

    private func outcome(_ kind: HTTPError.Kind, permanent: Bool = false) -> HTTPOutcome {
        var error = HTTPError(kind: kind, url: "https://h/…", reason: "r")
        error.isPermanent = permanent
        return HTTPOutcome.classify(.failure(error), now: 0)
    }

    @Test func statuses() {
        for status in [200, 201, 202, 204, 299] { #expect(outcome(status) == .success) }
        for status in [408, 425, 429, 500, 502, 503, 504, 599] {
            #expect(outcome(status) == .retry(after: nil, reason: "HTTP \(status)"))
        }
        for status in [100, 301, 302, 400, 401, 403, 404, 410, 422] {
            #expect(outcome(status) == .permanent(reason: "HTTP \(status)"))
        }
    }

    @Test func retryAfterIsHonoured() {
        #expect(outcome(429, retryAfter: "2") == .retry(after: 2000, reason: "HTTP 429"))
        #expect(outcome(503, retryAfter: "junk") == .retry(after: nil, reason: "HTTP 503"))
        #expect(outcome(400, retryAfter: "2") == .permanent(reason: "HTTP 400"))
    }

    @Test func errors() {
        for kind in [HTTPError.Kind.timeout, .connectionRefused, .dns, .certificate, .other] {
            #expect(outcome(kind) == .retry(after: nil, reason: "https://h/…: r"))
        }
        #expect(outcome(.tls) == .permanent(reason: "https://h/…: r"))
        #expect(outcome(.other, permanent: true) == .permanent(reason: "https://h/…: r"))
    }
}

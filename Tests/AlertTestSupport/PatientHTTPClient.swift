public import AlertHTTP

/// An `HTTPClient` for tests whose subject is not a timeout: each request goes through `base`
/// with at least a minute to connect and a minute to be answered. Swift Testing starts every
/// test at once, and on two busy cores an in-process server can take longer than the
/// program's 10 s to answer then; a test of what the answer holds should not fail for that.
public struct PatientHTTPClient: HTTPClient {
    public static let patience: Int64 = 60_000
    public let base: any HTTPClient

    public init(_ base: any HTTPClient) {
        self.base = base
    }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        var request = request
        request.timeout = max(request.timeout, Self.patience)
        request.connectTimeout = max(request.connectTimeout, Self.patience)
        return try await base.send(request)
    }
}

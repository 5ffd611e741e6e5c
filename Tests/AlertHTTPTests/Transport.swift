import AlertHTTP
import Testing

/// The two clients the tests run against: the feeds' (SwiftNIO) and the webhooks' (libcurl).
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case nio
    case curl

    /// A new client for each test (the libcurl one shuts its thread down when released).
    var client: any HTTPClient {
        switch self {
        case .nio: NIOHTTPClient()
        case .curl: CurlHTTPClient()
        }
    }

    var testDescription: String { rawValue }
}

extension HTTPClient {
    /// `send`'s outcome as a value.
    func result(_ request: HTTPRequest) async -> Result<HTTPResponse, HTTPError> {
        do { return .success(try await send(request)) } catch { return .failure(error) }
    }
}

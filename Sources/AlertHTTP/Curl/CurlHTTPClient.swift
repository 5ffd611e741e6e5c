import Logging
import Synchronization

/// `HTTPClient` over libcurl's multi interface: any number of concurrent `send`s share one
/// thread and one connection cache (kept-alive connections are reused across requests to the
/// same host).
///
/// TLS peer and host verification are always on; redirects are never followed; `Expect:
/// 100-continue` is never sent. Errors and log lines carry only `RedactedURL` forms of URLs.
///
/// Call `shutdown()` when done (deinit does it too): requests still in flight then fail with
/// kind `.other`.
public final class CurlHTTPClient: HTTPClient {
    /// The process's webhook client: one curl multi loop (one thread, one connection cache).
    /// Created on first use, which loads libcurl (the feeds use `NIOHTTPClient`).
    public static let shared = CurlHTTPClient()

    /// nil when libcurl cannot be loaded: every `send` then fails with the reason.
    private let loop: CurlMultiLoop?
    private let nextID = Atomic<UInt64>(0)
    private let logger: Logger

    public init(logger: Logger = Logger(label: "pricealert.http")) {
        self.logger = logger
        loop = curlUnavailable == nil ? CurlMultiLoop() : nil
        loop?.start()
    }

    deinit {
        loop?.shutdown()
    }

    /// Stops the client's thread after failing the requests in flight; later `send`s fail at once.
    public func shutdown() {
        loop?.shutdown()
    }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard let loop else {
            throw HTTPError(kind: .other, url: RedactedURL.redact(request.url), reason: curlUnavailable ?? "")
        }
        let transfer = try CurlTransfer(id: nextID.wrappingAdd(1, ordering: .relaxed).newValue, request: request)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.continuation = continuation
                if !loop.submit(transfer) { transfer.fail("HTTP client shut down") }
            }
        } onCancel: {
            loop.cancel(transfer)
        }
        if case .failure(let error) = result {
            logger.debug(
                "HTTP request failed",
                metadata: [
                    "url": "\(error.url)", "kind": "\(error.kind)", "reason": "\(error.reason)"
                ])
        }
        return try result.get()
    }
}

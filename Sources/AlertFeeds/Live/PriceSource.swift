import AlertHTTP
import AlertModel
import Platform

/// One exchange or price API: its market list, a snapshot of current prices, and how live
/// prices arrive. Each source is one file (or folder) behind this protocol; `SourceRegistry`
/// maps names to them.
public protocol PriceSource: Sendable {
    /// `btse`, `poloniex`, …: the name users give with `--source`.
    var name: String { get }
    /// The REST base URL requests go to (the default, or `--endpoint`).
    var endpoint: String { get }
    /// Loads the market list (REST). Sources without one return the markets their price
    /// listing implies.
    func loadMarkets(http: any HTTPClient) async throws -> [Market]
    /// Current prices from REST, for `markets` and one-shot runs.
    func snapshot(http: any HTTPClient) async throws -> [Tick]
    /// How live prices arrive. Called after `loadMarkets`, whose results a plan may need
    /// (Poloniex legacy pair ids).
    func livePlan() -> LivePlan
}

/// How a source's live prices arrive.
public struct LivePlan: Sendable {
    public enum Transport: Sendable {
        case websocket(WebSocketPlan)
        case polling(PollingPlan)
    }

    public var transport: Transport
    /// Side requests that run while the main transport is up and feed it what it lacks, such
    /// as BTSE's 24 h figures (their frames are usually `.control`).
    public var companions: [PollingPlan]

    public init(transport: Transport, companions: [PollingPlan] = []) {
        self.transport = transport
        self.companions = companions
    }
}

public struct WebSocketPlan: Sendable {
    public var url: String
    /// Text frames sent after every (re)connect.
    public var subscribe: [String]
    /// A text frame the server expects as a keep-alive, and how often.
    public var ping: String?
    public var pingInterval: Duration
    public var parse: @Sendable (_ frame: [UInt8], _ receivedAt: Int64) -> FeedFrame

    public init(
        url: String, subscribe: [String], ping: String?, pingInterval: Duration,
        parse: @escaping @Sendable ([UInt8], Int64) -> FeedFrame
    ) {
        self.url = url
        self.subscribe = subscribe
        self.ping = ping
        self.pingInterval = pingInterval
        self.parse = parse
    }
}

public struct PollingPlan: Sendable {
    public var request: HTTPRequest
    public var interval: Duration
    public var parse: @Sendable (_ body: [UInt8], _ receivedAt: Int64) -> FeedFrame

    public init(request: HTTPRequest, interval: Duration, parse: @escaping @Sendable ([UInt8], Int64) -> FeedFrame) {
        self.request = request
        self.interval = interval
        self.parse = parse
    }
}

/// A REST call that did not give what the source needs. `description` names the URL.
public struct SourceError: Error, Sendable, CustomStringConvertible {
    public var url: String
    public var reason: String
    /// Set for 429/503 with `Retry-After`: how long the server asked us to wait (ms).
    public var retryAfter: Int64?

    public init(url: String, reason: String, retryAfter: Int64? = nil) {
        self.url = url
        self.reason = reason
        self.retryAfter = retryAfter
    }

    public var description: String { "\(url): \(reason)" }
}

extension HTTPClient {
    /// GET `url` and return the body of a 2xx response; anything else is a `SourceError`
    /// (with the server's `Retry-After` when it sent one).
    public func fetch(_ request: HTTPRequest) async throws -> [UInt8] {
        let response: HTTPResponse
        do {
            response = try await send(request)
        } catch {
            throw SourceError(url: Endpoint.display(request.url), reason: error.reason)
        }
        guard (200..<300).contains(response.status) else {
            let retryAfter = RetryAfter.delay(from: response.header("retry-after"), now: Wallclock.millis())
            throw SourceError(
                url: Endpoint.display(request.url), reason: "HTTP \(response.status)", retryAfter: retryAfter)
        }
        return response.body
    }
}

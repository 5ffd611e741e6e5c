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
    /// Takes `savedMarkets` (the list an earlier run kept) as the market list when the REST API
    /// cannot give one at start; false when the live prices need what only a fresh list holds
    /// (the feed then waits for one). The default keeps nothing and returns true: the source's
    /// live prices do not depend on its list.
    func adopt(savedMarkets: [Market]) -> Bool
    /// Current prices from REST, for `markets` and one-shot runs.
    func snapshot(http: any HTTPClient) async throws -> [Tick]
    /// How live prices arrive. Called after `loadMarkets`, whose results a plan may need
    /// (Poloniex legacy pair ids).
    func livePlan() -> LivePlan
}

extension PriceSource {
    public func adopt(savedMarkets: [Market]) -> Bool { true }
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
    /// Text frames sent after every (re)connect of the first connection.
    public var subscribe: [String]
    /// A text frame the server expects as a keep-alive, and how often (on `FeedOptions.clock`).
    public var ping: String?
    public var pingInterval: Duration
    public var parse: @Sendable (_ frame: [UInt8], _ receivedAt: Int64) -> FeedFrame
    /// What the runner reads from a frame: its prices (`parse`) and, for exchanges whose frames
    /// carry them, a sequence number and a notice to reconnect.
    public var read: @Sendable (_ frame: [UInt8], _ receivedAt: Int64) -> LiveFrame
    /// The subscribe messages of each connection, when the exchange caps what one connection
    /// may carry (Binance: 1024 streams): one connection per element, each with its own
    /// reconnects. `[subscribe]` unless set.
    public var connections: [[String]]
    /// The least time between two subscribe messages on one connection (Binance: 5 messages a
    /// second); zero sends them back to back.
    public var subscribePace: Duration = .zero
    /// Replace each connection after this long (Binance closes them at 24 hours): the next one
    /// is opened and subscribed first, and the old one closed once the new one delivers prices.
    public var lifetime: Duration?
    /// Drop a tick that is not newer than the last delivered tick of its symbol (older, or the
    /// same time and price): what an overlapping or resubscribed connection repeats.
    public var dropsRepeats = false
    /// How many markets the subscribe messages name over all the connections, when the plan
    /// subscribes market by market: each connection's `connected` line says it.
    public var markets: Int?

    public init(
        url: String, subscribe: [String], ping: String?, pingInterval: Duration,
        parse: @escaping @Sendable ([UInt8], Int64) -> FeedFrame
    ) {
        self.url = url
        self.subscribe = subscribe
        self.ping = ping
        self.pingInterval = pingInterval
        self.parse = parse
        self.read = { LiveFrame(parse($0, $1)) }
        self.connections = [subscribe]
    }

    /// A plan whose frames carry more than prices (`LiveFrame`), over `connections`.
    public init(
        url: String, connections: [[String]], ping: String?, pingInterval: Duration,
        read: @escaping @Sendable ([UInt8], Int64) -> LiveFrame
    ) {
        self.url = url
        self.subscribe = connections.first ?? []
        self.ping = ping
        self.pingInterval = pingInterval
        self.parse = { read($0, $1).frame }
        self.read = read
        self.connections = connections.isEmpty ? [[]] : connections
    }
}

/// One websocket frame as the runner sees it.
public struct LiveFrame: Sendable, Equatable {
    public var frame: FeedFrame
    /// The connection's message counter (Coinbase `sequence_num`): each frame's is one more
    /// than the one before; a jump means messages were lost.
    public var sequence: Int64?
    /// The server announced that this connection will end (Binance `serverShutdown`): the
    /// runner opens its replacement at once.
    public var replaceConnection = false

    public init(_ frame: FeedFrame, sequence: Int64? = nil, replaceConnection: Bool = false) {
        self.frame = frame
        self.sequence = sequence
        self.replaceConnection = replaceConnection
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

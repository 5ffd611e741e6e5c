import AlertHTTP
import AlertModel
import Platform

/// Poloniex's legacy API: `returnTicker` gives the markets and the pair ids that the ticker
/// channel 1002 of `wss://api2.poloniex.com` refers to (`percentChange` is a fraction: ×100);
/// the server's `[1010]` heartbeats keep the connection alive.
public struct PoloniexLegacySource: PriceSource {
    public let name = "poloniex-legacy"
    public let endpoint: String
    let websocket: String
    let pairs = SharedBox<[Int: String]>([:])

    public init(endpoint: String? = nil) {
        self.endpoint = endpoint ?? "https://poloniex.com"
        websocket = endpoint.map { Endpoint.join(Endpoint.websocket(for: $0), "/") } ?? "wss://api2.poloniex.com"
    }

    var tickerURL: String { Endpoint.join(endpoint, "/public?command=returnTicker") }

    private func ticker(http: any HTTPClient) async throws -> PoloniexLegacyTicker {
        let now = Wallclock.millis()
        let ticker = try await http.fetch(tickerURL) { PoloniexLegacyTicker.parse($0, receivedAt: now) }
        pairs.set(ticker.pairs)
        return ticker
    }

    public func loadMarkets(http: any HTTPClient) async throws -> [Market] {
        try await ticker(http: http).markets
    }

    /// Its live frames name pairs by the ids only a fresh ticker gives: a saved list cannot do.
    public func adopt(savedMarkets: [Market]) -> Bool { false }

    public func snapshot(http: any HTTPClient) async throws -> [Tick] {
        try await ticker(http: http).ticks
    }

    public func livePlan() -> LivePlan {
        let pairs = self.pairs
        return LivePlan(
            transport: .websocket(
                WebSocketPlan(
                    url: websocket, subscribe: [PoloniexLegacyFrame.subscribeMessage], ping: nil,
                    pingInterval: .seconds(60)
                ) { frame, receivedAt in
                    PoloniexLegacyFrame.parse(frame, receivedAt: receivedAt, pairs: pairs.get())
                }))
    }
}

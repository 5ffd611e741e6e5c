import AlertHTTP
import AlertModel
import Platform

/// Poloniex (API v3): markets from `GET /markets`, prices from the `ticker` channel of
/// `wss://ws.poloniex.com/ws/public` (`dailyChange` is a fraction: ×100), a ping at least
/// every 30 s.
public struct PoloniexSource: PriceSource {
    public let name = "poloniex"
    public let endpoint: String
    let websocket: String

    public init(endpoint: String? = nil) {
        self.endpoint = endpoint ?? "https://api.poloniex.com"
        websocket =
            endpoint.map { Endpoint.join(Endpoint.websocket(for: $0), "/ws/public") }
            ?? "wss://ws.poloniex.com/ws/public"
    }

    public func loadMarkets(http: any HTTPClient) async throws -> [Market] {
        try await http.fetch(Endpoint.join(endpoint, "/markets"), decode: PoloniexMarkets.parse)
    }

    public func snapshot(http: any HTTPClient) async throws -> [Tick] {
        let url = Endpoint.join(endpoint, "/markets/ticker24h")
        return try PoloniexTicker24h.parse(try await http.fetch(HTTPRequest(url: url)), receivedAt: Wallclock.millis())
            .ticks(from: url)
    }

    public func livePlan() -> LivePlan {
        LivePlan(
            transport: .websocket(
                WebSocketPlan(
                    url: websocket, subscribe: [PoloniexTicker.subscribeMessage], ping: PoloniexTicker.pingMessage,
                    pingInterval: .seconds(20), parse: PoloniexTicker.parse)))
    }
}

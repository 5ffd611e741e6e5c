import AlertCore
import AlertHTTP

/// CoinRanking: `GET /v2/coins` polled (REST only), every 60 s by default. A
/// `COINRANKING_API_KEY` in the environment is sent as `x-access-token`.
public struct CoinRankingSource: PriceSource {
    public let name = "coinranking"
    public let endpoint: String
    var interval: Duration = .seconds(60)

    public init(endpoint: String? = nil) {
        self.endpoint = endpoint ?? "https://api.coinranking.com"
    }

    var request: HTTPRequest {
        HTTPRequest(url: Endpoint.join(endpoint, "/v2/coins?limit=100"),
                    headers: Environment.header("x-access-token", from: "COINRANKING_API_KEY"))
    }

    public func loadMarkets(http: any HTTPClient) async throws -> [Market] {
        try await http.fetch(request.url, headers: request.headers) { CoinRankingCoins.markets($0) }
    }

    public func snapshot(http: any HTTPClient) async throws -> [Tick] {
        try CoinRankingCoins.ticks(try await http.fetch(request), receivedAt: Wallclock.millis()).ticks(from: request.url)
    }

    public func livePlan() -> LivePlan {
        LivePlan(transport: .polling(PollingPlan(request: request, interval: interval, parse: CoinRankingCoins.ticks)))
    }
}

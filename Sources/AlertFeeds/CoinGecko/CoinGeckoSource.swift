import AlertCore
import AlertHTTP

/// CoinGecko: `GET /api/v3/coins/markets?vs_currency=usd` polled (REST only), every 60 s by
/// default to stay inside the public API's rate limit. A `COINGECKO_API_KEY` in the
/// environment is sent as `x-cg-demo-api-key`.
public struct CoinGeckoSource: PriceSource {
    public let name = "coingecko"
    public let endpoint: String
    var interval: Duration = .seconds(60)

    public init(endpoint: String? = nil) {
        self.endpoint = endpoint ?? "https://api.coingecko.com"
    }

    var request: HTTPRequest {
        HTTPRequest(url: Endpoint.join(endpoint, "/api/v3/coins/markets?vs_currency=usd&per_page=250&page=1"),
                    headers: Environment.header("x-cg-demo-api-key", from: "COINGECKO_API_KEY"))
    }

    public func loadMarkets(http: any HTTPClient) async throws -> [Market] {
        try await http.fetch(request.url, headers: request.headers) { CoinGeckoMarkets.markets($0) }
    }

    public func snapshot(http: any HTTPClient) async throws -> [Tick] {
        try CoinGeckoMarkets.ticks(try await http.fetch(request), receivedAt: Wallclock.millis()).ticks(from: request.url)
    }

    public func livePlan() -> LivePlan {
        LivePlan(transport: .polling(PollingPlan(request: request, interval: interval, parse: CoinGeckoMarkets.ticks)))
    }
}

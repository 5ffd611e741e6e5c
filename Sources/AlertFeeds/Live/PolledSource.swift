import AlertCore
import AlertHTTP
import Wallclock

/// A source that is one REST listing polled on a timer (CoinGecko, CoinRanking): the same
/// response gives the market list, the snapshot and the live ticks.
public struct PolledSource: PriceSource {
    public let name: String
    public let endpoint: String
    let path: String
    /// An API key header, taken from this environment variable when it is set.
    let keyHeader: (header: String, variable: String)
    let interval: Duration
    let markets: @Sendable ([UInt8]) -> Result<[Market], FeedPayloadError>
    let ticks: @Sendable ([UInt8], Int64) -> FeedFrame

    var request: HTTPRequest {
        HTTPRequest(url: Endpoint.join(endpoint, path), headers: Environment.header(keyHeader.header, from: keyHeader.variable))
    }

    public func loadMarkets(http: any HTTPClient) async throws -> [Market] {
        try await http.fetch(request.url, headers: request.headers, decode: markets)
    }

    public func snapshot(http: any HTTPClient) async throws -> [Tick] {
        try ticks(try await http.fetch(request), Wallclock.millis()).ticks(from: request.url)
    }

    public func livePlan() -> LivePlan {
        LivePlan(transport: .polling(PollingPlan(request: request, interval: interval, parse: ticks)))
    }
}

extension PolledSource {
    /// CoinGecko `GET /api/v3/coins/markets?vs_currency=usd`, every 60 s by default to stay
    /// inside the public API's rate limit; `COINGECKO_API_KEY` is sent as `x-cg-demo-api-key`.
    public static func coinGecko(endpoint: String? = nil, interval: Duration = .seconds(60)) -> PolledSource {
        PolledSource(name: "coingecko", endpoint: endpoint ?? "https://api.coingecko.com",
                     path: "/api/v3/coins/markets?vs_currency=usd&per_page=250&page=1",
                     keyHeader: ("x-cg-demo-api-key", "COINGECKO_API_KEY"), interval: interval,
                     markets: { CoinGeckoMarkets.markets($0) }, ticks: CoinGeckoMarkets.ticks)
    }

    /// CoinRanking `GET /v2/coins`, every 60 s by default; `COINRANKING_API_KEY` is sent as
    /// `x-access-token`.
    public static func coinRanking(endpoint: String? = nil, interval: Duration = .seconds(60)) -> PolledSource {
        PolledSource(name: "coinranking", endpoint: endpoint ?? "https://api.coinranking.com",
                     path: "/v2/coins?limit=100", keyHeader: ("x-access-token", "COINRANKING_API_KEY"),
                     interval: interval, markets: { CoinRankingCoins.markets($0) }, ticks: CoinRankingCoins.ticks)
    }
}

import AlertHTTP
import AlertModel
import Platform

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
    let history: CoinHistory
    /// The listing's symbol → coin id table, read once per process when candles are first asked for.
    let coinIDs = SharedBox<[String: String]?>(nil)

    var request: HTTPRequest {
        HTTPRequest(
            url: Endpoint.join(endpoint, path), headers: Environment.header(keyHeader.header, from: keyHeader.variable))
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
        PolledSource(
            name: "coingecko", endpoint: endpoint ?? "https://api.coingecko.com",
            path: "/api/v3/coins/markets?vs_currency=usd&per_page=250&page=1",
            keyHeader: ("x-cg-demo-api-key", APIKeyVariables.coinGecko), interval: interval,
            markets: { CoinGeckoMarkets.markets($0) }, ticks: CoinGeckoMarkets.ticks,
            history: CoinHistory(ids: CoinGeckoMarkets.coinIDs, parse: CoinGeckoMarketChart.parse) {
                id, span, endpoint in
                CoinGeckoMarketChart.request(
                    id: id, days: CoinGeckoMarketChart.days(covering: span), endpoint: endpoint)
            })
    }

    /// CoinRanking `GET /v2/coins`, every 60 s by default; `COINRANKING_API_KEY` is sent as
    /// `x-access-token`.
    public static func coinRanking(endpoint: String? = nil, interval: Duration = .seconds(60)) -> PolledSource {
        PolledSource(
            name: "coinranking", endpoint: endpoint ?? "https://api.coinranking.com",
            path: "/v2/coins?limit=100", keyHeader: ("x-access-token", APIKeyVariables.coinRanking),
            interval: interval, markets: { CoinRankingCoins.markets($0) }, ticks: CoinRankingCoins.ticks,
            history: CoinHistory(ids: CoinRankingCoins.coinIDs, parse: CoinRankingHistory.parse) { id, span, endpoint in
                CoinRankingHistory.request(uuid: id, period: .covering(span), endpoint: endpoint)
            })
    }
}

/// An aggregator's price history of one coin, addressed by its own coin id (symbols are not
/// unique there), in one request for the whole span (the aggregator picks the spacing).
struct CoinHistory: Sendable {
    /// Upper-cased symbol → coin id, from the listing the source polls.
    let ids: @Sendable ([UInt8]) -> Result<[String: String], FeedPayloadError>
    let parse: @Sendable ([UInt8]) -> Result<CandlePage, FeedPayloadError>
    /// The request reaching `span` ms back for coin `id` at the REST base `endpoint`.
    let request: @Sendable (_ id: String, _ span: Int64, _ endpoint: String) -> HTTPRequest
}

extension PolledSource: CandleHistory {
    /// The coin the listing names first for `symbol`; none (no candles) when it names none.
    public func candles(
        of symbol: String, since: Int64, until: Int64, now: Int64, http: any HTTPClient
    ) async throws -> [Candle] {
        let ids: [String: String]
        if let known = coinIDs.get() {
            ids = known
        } else {
            ids = try await http.fetch(request, decode: history.ids)
            coinIDs.set(ids)
        }
        guard let id = ids[Symbol.normalize(symbol)] else { return [] }
        var request = history.request(id, now - since, endpoint)
        request.headers = self.request.headers
        let page = try await http.fetch(request, decode: history.parse)
        return CandlePaging.clipped(page.candles, since: since, until: until)
    }
}

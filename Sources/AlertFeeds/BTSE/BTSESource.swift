import AlertHTTP
import AlertModel
import Platform

/// BTSE: market list from `GET /futures/api/inquire/initial/market`, prices from the
/// `coinIndex` topic of `/ws/futures` (key `SYMBOL_1` → symbol `SYMBOL`), and the 24 h change
/// from `GET /spot/api/v3.2/market_summary` (`percentageChange`, already percent), polled
/// beside the websocket and attached to every index tick of the same base currency.
public struct BTSESource: PriceSource {
    public let name = "btse"
    public let endpoint: String
    let websocket: String
    let change24h = SharedBox<[String: Double]>([:])
    /// How often the 24 h figures are refreshed.
    var summaryEvery: Duration = .seconds(60)

    public init(endpoint: String? = nil) {
        self.endpoint = endpoint ?? "https://api.btse.com"
        websocket = Endpoint.join(endpoint.map { Endpoint.websocket(for: $0) } ?? "wss://ws.btse.com", "/ws/futures")
    }

    var marketsURL: String { Endpoint.join(endpoint, "/futures/api/inquire/initial/market") }
    var summaryURL: String { Endpoint.join(endpoint, "/spot/api/v3.2/market_summary") }

    public func loadMarkets(http: any HTTPClient) async throws -> [Market] {
        let body = try await http.fetch(HTTPRequest(url: marketsURL))
        do {
            return try BTSEMarketList.decode(body, source: Endpoint.display(marketsURL))
        } catch let error as BTSEMarketListError {
            // The error names the URL already; the SourceError names it once.
            throw SourceError(url: error.source, reason: error.reason)
        }
    }

    /// The spot market summary as ticks of the index symbols (`BTC-USD` → `BTC`).
    public func snapshot(http: any HTTPClient) async throws -> [Tick] {
        let summaries = try await http.fetch(summaryURL, decode: BTSEMarketSummary.parse)
        let now = Wallclock.millis()
        let changes = BTSEMarketSummary.changeByIndexSymbol(summaries)
        var ticks: [Tick] = []
        for summary in summaries where summary.quote.uppercased() == "USD" && !summary.futures {
            guard let last = summary.last, last > 0 else { continue }
            let symbol = summary.base.uppercased()
            ticks.append(Tick(time: now, symbol: symbol, price: last, change24h: changes[symbol]))
        }
        return ticks
    }

    public func livePlan() -> LivePlan {
        let change24h = self.change24h
        let ws = WebSocketPlan(
            url: websocket, subscribe: [BTSECoinIndex.subscribeMessage], ping: BTSECoinIndex.pingMessage,
            pingInterval: .seconds(15)
        ) { frame, receivedAt in
            guard case .ticks(var ticks) = BTSECoinIndex.parse(frame, receivedAt: receivedAt) else {
                return BTSECoinIndex.parse(frame, receivedAt: receivedAt)
            }
            let changes = change24h.get()
            if !changes.isEmpty {
                for i in ticks.indices { ticks[i].change24h = changes[ticks[i].symbol] }
            }
            return .ticks(ticks)
        }
        let summary = PollingPlan(request: HTTPRequest(url: summaryURL), interval: summaryEvery) { body, _ in
            switch BTSEMarketSummary.parse(body) {
            case .success(let summaries):
                change24h.set(BTSEMarketSummary.changeByIndexSymbol(summaries))
                return .control
            case .failure(let error):
                return .invalid("market_summary: \(error.reason)")
            }
        }
        return LivePlan(transport: .websocket(ws), companions: [summary])
    }
}

import AlertHTTP
import AlertModel
import AlertTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

@testable import AlertFeeds

/// Each source's `CandleHistory` (what `run` and `check --source` backfill with) through libcurl
/// against a local server that serves the source's recorded candle payload at its documented
/// path: the pages asked for, the symbol-to-market or coin-id mapping, the clipping.
@Suite("candle history of each source", .serialized)
struct CandleHistoryTests {
    /// A server answering `routes` (path → body); every request's path and query is logged.
    func serve(
        _ routes: [String: [UInt8]], status: HTTPResponse.Status = .ok,
        _ body: @Sendable (String, @Sendable () -> [String]) async throws -> Void
    ) async throws {
        let log = Mutex<[String]>([])
        let router = Router()
        for (path, bytes) in routes {
            router.get(RouterPath(path)) { request, _ -> Response in
                log.withLock { $0.append(request.uri.description) }
                return Response(
                    status: status, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }
        try await LoopbackServer.with(router) { port in
            try await body("http://127.0.0.1:\(port)") { log.withLock { $0 } }
        }
    }

    @Test func btseSpotMinutesInOnePage() async throws {
        let body = try candleFixture("btse_spot_ohlcv_doc_example.json")
        let expected = try BTSECandles.parse(body, resolution: .minute).get().candles
        try await serve(["/spot/api/v3.2/ohlcv": body]) { base, log in
            let since: Int64 = 1_624_987_320_000, until: Int64 = 1_624_987_440_000
            let candles = try await BTSESource(endpoint: base).candles(
                of: "BTC", since: since, until: until, now: until, http: PatientHTTPClient(NIOHTTPClient()))
            #expect(candles == expected)
            #expect(log() == ["/spot/api/v3.2/ohlcv?symbol=BTC-USD&resolution=1&start=\(since)&end=\(until - 1)"])
        }
    }

    /// Without spot candles, the perpetual future's; hour candles for a reach over a day, in
    /// pages of 300 hours, the oldest page first, starting at the hour that holds `since`.
    @Test func btseFallsBackToTheFutureInHourPages() async throws {
        let rows = try candleFixture("btse_futures_ohlcv_doc_example.json")
        try await serve(["/spot/api/v3.2/ohlcv": Array("[]".utf8), "/futures/api/v2.1/ohlcv": rows]) { base, log in
            let hour: Int64 = 3_600_000
            let since: Int64 = 1_624_987_200_000 - 1
            let until: Int64 = 1_624_987_200_000 + 500 * hour
            let candles = try await BTSESource(endpoint: base).candles(
                of: "BTC", since: since, until: until, now: until, http: PatientHTTPClient(NIOHTTPClient()))
            // Read at hour resolution, the doc's two rows are two one-hour candles.
            #expect(candles.map(\.start) == [1_624_987_320_000, 1_624_987_380_000])
            #expect(candles.allSatisfy { $0.end - $0.start == hour })
            let first = since - since % hour
            let middle = first + 300 * hour
            #expect(
                log() == [
                    "/spot/api/v3.2/ohlcv?symbol=BTC-USD&resolution=60&start=\(first)&end=\(middle - 1)",
                    "/spot/api/v3.2/ohlcv?symbol=BTC-USD&resolution=60&start=\(middle)&end=\(until - 1)",
                    "/futures/api/v2.1/ohlcv?symbol=BTCPFC&resolution=60&start=\(first)&end=\(middle - 1)",
                    "/futures/api/v2.1/ohlcv?symbol=BTCPFC&resolution=60&start=\(middle)&end=\(until - 1)"
                ])
        }
    }

    /// The candle that is not closed by `until` is left out (its close would come after the
    /// first live tick); so are those before the one that holds `since`.
    @Test func poloniexHoursClippedToTheSpan() async throws {
        let body = try candleFixture("poloniex_v3_candles_shape.json")
        try await serve(["/markets/BTC_USDT/candles": body]) { base, log in
            let source = PoloniexSource(endpoint: base)
            let hour: Int64 = 3_600_000
            let all = try await source.candles(
                of: "BTC_USDT", since: 1_649_023_200_000 - 24 * hour, until: 1_649_030_400_000, now: 1_649_030_400_000,
                http: PatientHTTPClient(NIOHTTPClient()))
            #expect(all.map(\.close) == [46975.27, 47059.39])
            let open = try await source.candles(
                of: "BTC_USDT", since: 1_649_023_200_000 - 24 * hour, until: 1_649_030_399_000, now: 1_649_030_399_000,
                http: PatientHTTPClient(NIOHTTPClient()))
            #expect(open.map(\.close) == [46975.27])
            let later = try await source.candles(
                of: "BTC_USDT", since: 1_649_026_800_000 + 60_000, until: 1_649_030_400_000, now: 1_649_030_400_000,
                http: PatientHTTPClient(NIOHTTPClient()))
            #expect(later.map(\.close) == [47059.39])
            #expect(
                log().first
                    == "/markets/BTC_USDT/candles?interval=HOUR_1&startTime=\(1_649_023_200_000 - 24 * hour)&endTime=\(1_649_030_400_000 - 1)&limit=500"
            )
        }
    }

    /// CoinGecko addresses a coin by its id, read once from the listing the source polls.
    @Test func coinGeckoLooksUpTheCoinIdOnce() async throws {
        let chart = try candleFixture("coingecko_market_chart_doc_example.json")
        let listing = Array(
            #"[{"id":"bitcoin","symbol":"btc","current_price":1},{"id":"bitcoin-fork","symbol":"btc","current_price":1}]"#
                .utf8)
        try await serve(["/api/v3/coins/markets": listing, "/api/v3/coins/bitcoin/market_chart": chart]) { base, log in
            let source = PolledSource.coinGecko(endpoint: base)
            let day: Int64 = 86_400_000
            let until: Int64 = 1_711_983_682_001
            let candles = try await source.candles(
                of: "BTC", since: until - day, until: until, now: until, http: PatientHTTPClient(NIOHTTPClient()))
            #expect(candles.map(\.close) == [69702.3087473573, 71246.9514406015, 68887.7495158568])
            let none = try await source.candles(
                of: "ETH", since: until - day, until: until, now: until, http: PatientHTTPClient(NIOHTTPClient()))
            #expect(none.isEmpty)
            #expect(
                log() == [
                    "/api/v3/coins/markets?vs_currency=usd&per_page=250&page=1",
                    "/api/v3/coins/bitcoin/market_chart?vs_currency=usd&days=2"
                ])
        }
    }

    @Test func coinRankingLooksUpTheCoinUuid() async throws {
        let history = try candleFixture("coinranking_coin_history_shape.json")
        let listing = Array(
            #"{"status":"success","data":{"coins":[{"uuid":"Qwsogvtv82FCd","symbol":"BTC","price":"1"}]}}"#.utf8)
        try await serve(["/v2/coins": listing, "/v2/coin/Qwsogvtv82FCd/history": history]) { base, log in
            let source = PolledSource.coinRanking(endpoint: base)
            let until: Int64 = 1_585_072_800_001
            let candles = try await source.candles(
                of: "btc", since: until - 3 * 3_600_000, until: until, now: until,
                http: PatientHTTPClient(NIOHTTPClient()))
            #expect(candles.map(\.close) == [9335.3004209165, 9329.4331700521, 9370.9993109108])
            #expect(log().last == "/v2/coin/Qwsogvtv82FCd/history?timePeriod=3h")
        }
    }

    /// `Backfill.fetch` of one need: that symbol's candles over its reach, or its failure as
    /// an outcome naming the URL (the next symbol is fetched after this one was seeded).
    @Test func backfillFetchesOneNeed() async throws {
        let body = try candleFixture("btse_spot_ohlcv_doc_example.json")
        let expected = try BTSECandles.parse(body, resolution: .minute).get().candles
        let since: Int64 = 1_624_987_320_000, until: Int64 = 1_624_987_440_000
        let need = Backfill.Need(symbol: "BTC", reach: until - since, until: until)
        try await serve(["/spot/api/v3.2/ohlcv": body]) { base, log in
            let outcome = await Backfill(history: BTSESource(endpoint: base), http: PatientHTTPClient(NIOHTTPClient()))
                .fetch(need)
            guard case .candles(let candles) = outcome else { Issue.record("no candles: \(outcome)"); return }
            #expect(candles == expected)
            #expect(log() == ["/spot/api/v3.2/ohlcv?symbol=BTC-USD&resolution=1&start=\(since)&end=\(until - 1)"])
        }
        try await serve(["/spot/api/v3.2/ohlcv": Array("oops".utf8)], status: .internalServerError) { base, _ in
            let outcome = await Backfill(history: BTSESource(endpoint: base), http: PatientHTTPClient(NIOHTTPClient()))
                .fetch(need)
            guard case .failed(let reason) = outcome else { Issue.record("not a failure: \(outcome)"); return }
            #expect(reason == "\(base)/spot/api/v3.2/ohlcv: HTTP 500")
        }
    }

    /// A failing page is an error naming the URL without its query.
    @Test func aFailingPageNamesTheURL() async throws {
        try await serve(["/spot/api/v3.2/ohlcv": Array("oops".utf8)], status: .internalServerError) { base, _ in
            let error = await #expect(throws: SourceError.self) {
                _ = try await BTSESource(endpoint: base).candles(
                    of: "BTC", since: 0, until: 60_000, now: 60_000, http: PatientHTTPClient(NIOHTTPClient()))
            }
            #expect(error?.description == "\(base)/spot/api/v3.2/ohlcv: HTTP 500")
        }
    }
}

@Suite struct BackfillPlanTests {
    /// Each symbol needs its longest window back, and its longest window up to a day at minute
    /// detail; `match` rules reach the symbols of the markets they match, portfolio rules the
    /// portfolio's holdings; disabled rules none.
    @Test func reachesPerSymbol() {
        let day: Int64 = 86_400_000
        func change(_ window: Int64) -> Condition { .change(window: window, .above(1)) }
        let rules = [
            Rule(id: "a", scope: .symbols(["BTC", "eth"]), condition: change(7 * day)),
            Rule(id: "b", scope: .symbols(["BTC"]), condition: change(300_000)),
            Rule(id: "c", scope: .match(MarketFilter(quote: "USD")), condition: change(day)),
            Rule(id: "d", scope: .symbols(["SOL"]), condition: .price(.above(1))),
            Rule(id: "e", scope: .symbols(["XRP"]), condition: change(30 * day), enabled: false),
            Rule(id: "f", scope: .portfolio("Mine"), condition: change(2 * day))
        ]
        let portfolios = [
            Portfolio(name: "mine", holdings: [.init(symbol: "LTC", amount: 2), .init(symbol: "BTC", amount: 1)])
        ]
        let markets = MarketList([
            Market(symbol: "ada", base: "ADA", quote: "USD", future: false, active: true),
            Market(symbol: "DOT", base: "DOT", quote: "EUR", future: false, active: true)
        ])
        #expect(
            Backfill.reaches(rules: rules, markets: markets, portfolios: portfolios) == [
                "BTC": Backfill.Reach(reach: 7 * day, detail: 300_000),
                "ETH": Backfill.Reach(reach: 7 * day, detail: 0),
                "ADA": Backfill.Reach(reach: day, detail: day),
                "LTC": Backfill.Reach(reach: 2 * day, detail: 0)
            ])
    }

    /// Rules v3 keys: a qualified entry reaches its source's key (the source as written); an
    /// unqualified one the key without a source and each source's whose list has it; a `match`
    /// rule each list's matching markets, as its `match.source` allows.
    @Test func reachesPerSourceKey() {
        let hour: Int64 = 3_600_000
        func change(_ window: Int64) -> Condition { .change(window: window, .above(1)) }
        let rules = [
            Rule(id: "a", scope: .symbols(["bx:btc/usdt"]), condition: change(hour)),
            Rule(id: "b", scope: .symbols(["ETH/USDT"]), condition: change(2 * hour)),
            Rule(id: "c", scope: .match(MarketFilter(quote: "EUR", sources: ["ok"])), condition: change(3 * hour))
        ]
        func list(_ symbols: String...) -> MarketList {
            MarketList(
                symbols.map {
                    Market(
                        symbol: $0, base: "B", quote: String($0.split(separator: "/")[1]), future: false, active: true)
                })
        }
        #expect(
            Backfill.reaches(
                rules: rules, markets: list("DOT/EUR"),
                sourceMarkets: ["bx": list("BTC/USDT", "ETH/USDT"), "ok": list("ETH/USDT", "SOL/EUR")]) == [
                    "bx:BTC/USDT": Backfill.Reach(reach: hour, detail: hour),
                    "ETH/USDT": Backfill.Reach(reach: 2 * hour, detail: 2 * hour),
                    "bx:ETH/USDT": Backfill.Reach(reach: 2 * hour, detail: 2 * hour),
                    "ok:ETH/USDT": Backfill.Reach(reach: 2 * hour, detail: 2 * hour),
                    "ok:SOL/EUR": Backfill.Reach(reach: 3 * hour, detail: 3 * hour)
                ])
    }

    /// Older candles that overlap the first newer one are left out, so seeded ticks keep time order.
    @Test func joinedKeepsTimeOrder() {
        func candle(_ start: Int64, _ end: Int64) -> Candle {
            Candle(start: start, end: end, open: 1, high: 1, low: 1, close: 1)
        }
        let older = [candle(0, 100), candle(100, 200)]
        let newer = [candle(180, 190), candle(190, 200)]
        #expect(Backfill.joined(older, newer) == [candle(0, 100), candle(180, 190), candle(190, 200)])
        #expect(Backfill.joined(older, []) == older)
    }
}

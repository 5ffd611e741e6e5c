import AlertHTTP
import AlertModel
import AlertTestSupport
import Foundation
import Hummingbird
import Synchronization
import Testing

@testable import AlertFeeds

/// The bytes of one file in `CandleFixtures/` (next to this file; see its README).
func candleFixture(_ name: String) throws -> [UInt8] {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("CandleFixtures")
    return Array(try Data(contentsOf: folder.appendingPathComponent(name)))
}

@Suite struct CandleSeedingTests {
    @Test func aCandleSeedsLowThenHighAtItsStartAndItsCloseAtItsLastMillisecond() {
        let candle = Candle(start: 60_000, end: 120_000, open: 10, high: 12, low: 9, close: 11)
        #expect(
            candle.seededTicks(symbol: "BTC") == [
                Tick(time: 60_000, symbol: "BTC", price: 9),
                Tick(time: 60_000, symbol: "BTC", price: 12),
                Tick(time: 119_999, symbol: "BTC", price: 11)
            ])
    }

    @Test func unusableCandles() {
        #expect(Candle(start: 0, end: 1, open: 1, high: 1, low: 1, close: 1).isUsable)
        #expect(!Candle(start: 1, end: 1, open: 1, high: 1, low: 1, close: 1).isUsable)
        #expect(!Candle(start: 0, end: 1, open: 1, high: .nan, low: 1, close: 1).isUsable)
        #expect(!Candle(start: 0, end: 1, open: 1, high: 1, low: 0, close: 1).isUsable)
    }
}

@Suite struct BTSECandleTests {
    /// The doc example, newest first, comes back oldest first, seconds read as milliseconds.
    @Test(arguments: [BTSECandles.Kind.spot, .futures])
    func docExample(kind: BTSECandles.Kind) throws {
        let name = kind == .spot ? "btse_spot_ohlcv_doc_example.json" : "btse_futures_ohlcv_doc_example.json"
        let page = try BTSECandles.parse(try candleFixture(name), resolution: .minute, kind: kind).get()
        #expect(
            page
                == CandlePage(candles: [
                    Candle(
                        start: 1_624_987_320_000, end: 1_624_987_380_000, open: 36476.5, high: 36481.5, low: 36466,
                        close: 36466),
                    Candle(
                        start: 1_624_987_380_000, end: 1_624_987_440_000, open: 36477, high: 36477, low: 36473.5,
                        close: 36473.5)
                ]))
    }

    @Test func millisecondTimesStringsAndBadRows() throws {
        let body = #"""
            [[1700003600000,"101","103","100","102","5"],
             [1700000000,100,102,99,101,3],
             [1700007200,100,102,99],
             [1700010800,100,null,99,101,1],
             [1700014400,100,102,-1,101,1],
             "x",
             [1700000000,1,1,1,1,1]]
            """#
        let page = try BTSECandles.parse(bytes(body), resolution: .hour).get()
        #expect(
            page.candles == [
                Candle(start: 1_700_000_000_000, end: 1_700_003_600_000, open: 100, high: 102, low: 99, close: 101),
                Candle(start: 1_700_003_600_000, end: 1_700_007_200_000, open: 101, high: 103, low: 100, close: 102)
            ])
        // Too short, null high, negative low, not an array, a second candle at one start.
        #expect(page.skipped == 5)
    }

    @Test func malformedBodies() throws {
        #expect(
            BTSECandles.parse(bytes("<html>502</html>"), resolution: .minute)
                == .failure(FeedPayloadError("BTSE spot ohlcv: not JSON at byte 0 (expected a JSON value)")))
        #expect(
            BTSECandles.parse(
                bytes(#"{"status":400,"errorCode":51523,"message":"BAD_REQUEST: symbol"}"#), resolution: .minute,
                kind: .futures)
                == .failure(FeedPayloadError("BTSE futures ohlcv: error: BAD_REQUEST: symbol")))
        #expect(
            BTSECandles.parse(bytes("42"), resolution: .minute)
                == .failure(FeedPayloadError("BTSE spot ohlcv: expected an array, found a number")))
        #expect(
            BTSECandles.parse(bytes("[[1,2,"), resolution: .minute)
                == .failure(
                    FeedPayloadError("BTSE spot ohlcv: not JSON at byte 6 (expected a JSON value, found end of input)"))
        )
        #expect(try BTSECandles.parse(bytes("[]"), resolution: .minute).get() == CandlePage(candles: []))
    }

    @Test func requests() {
        #expect(
            BTSECandles.request(
                .spot, symbol: "BTC-USD", resolution: .hour, start: 1_700_000_000_000, end: 1_700_003_600_000
            ).url
                == "https://api.btse.com/spot/api/v3.2/ohlcv?symbol=BTC-USD&resolution=60&start=1700000000000&end=1700003600000"
        )
        #expect(
            BTSECandles.request(
                .futures, symbol: "BTCPFC", resolution: .day, start: 0, end: 86_400_000,
                endpoint: "http://127.0.0.1:8080/"
            ).url
                == "http://127.0.0.1:8080/futures/api/v2.1/ohlcv?symbol=BTCPFC&resolution=1440&start=0&end=86400000")
    }
}

@Suite struct PoloniexCandleTests {
    @Test func documentedShape() throws {
        let page = try PoloniexCandles.parse(try candleFixture("poloniex_v3_candles_shape.json"), interval: .hour).get()
        #expect(
            page
                == CandlePage(candles: [
                    Candle(
                        start: 1_649_023_200_000, end: 1_649_026_800_000, open: 46850.10, high: 47005.72, low: 46801.00,
                        close: 46975.27),
                    Candle(
                        start: 1_649_026_800_000, end: 1_649_030_400_000, open: 46975.27, high: 47100.00, low: 46930.61,
                        close: 47059.39)
                ]))
    }

    @Test func missingCloseTimeUsesTheIntervalAndBadRowsAreSkipped() throws {
        let body = #"""
            [["1","3","2","2.5","0","0","0","0",0,0,"2","MINUTE_5",300000],
             ["1","3","2","2.5","0","0","0","0",0,0,"2","MINUTE_5"],
             ["x","3","2","2.5","0","0","0","0",0,0,"2","MINUTE_5",600000,899999],
             ["0","3","2","2.5","0","0","0","0",0,0,"2","MINUTE_5",900000,1199999],
             {"low":"1"}]
            """#
        let page = try PoloniexCandles.parse(bytes(body), interval: .fiveMinutes).get()
        #expect(page.candles == [Candle(start: 300_000, end: 600_000, open: 2, high: 3, low: 1, close: 2.5)])
        #expect(page.skipped == 4)
    }

    @Test func malformedBodies() {
        #expect(
            PoloniexCandles.parse(bytes(#"{"code":21001,"message":"Invalid symbol!"}"#), interval: .hour)
                == .failure(FeedPayloadError("Poloniex candles: error: Invalid symbol!")))
        #expect(
            PoloniexCandles.parse(bytes(#"{"x":1}"#), interval: .hour)
                == .failure(FeedPayloadError("Poloniex candles: expected an array, found an object")))
        #expect(
            PoloniexCandles.parse(bytes(""), interval: .hour)
                == .failure(
                    FeedPayloadError("Poloniex candles: not JSON at byte 0 (expected a JSON value, found end of input)")
                ))
    }

    @Test func request() {
        #expect(
            PoloniexCandles.request(symbol: "BTC_USDT", interval: .hour, start: 1, end: 2).url
                == "https://api.poloniex.com/markets/BTC_USDT/candles?interval=HOUR_1&startTime=1&endTime=2&limit=500")
        #expect(
            PoloniexCandles.request(symbol: "A B/C", interval: .day, start: 1, end: 2).url
                == "https://api.poloniex.com/markets/A%20B%2FC/candles?interval=DAY_1&startTime=1&endTime=2&limit=500")
    }
}

@Suite struct CoinGeckoMarketChartTests {
    /// Each price point becomes a one-millisecond candle at its time.
    @Test func docExample() throws {
        let page = try CoinGeckoMarketChart.parse(try candleFixture("coingecko_market_chart_doc_example.json")).get()
        let points: [(Int64, Double)] = [
            (1_711_843_200_000, 69702.3087473573), (1_711_929_600_000, 71246.9514406015),
            (1_711_983_682_000, 68887.7495158568)
        ]
        #expect(
            page
                == CandlePage(
                    candles: points.map {
                        Candle(start: $0.0, end: $0.0 + 1, open: $0.1, high: $0.1, low: $0.1, close: $0.1)
                    }))
    }

    @Test func badPointsAreSkipped() throws {
        let page = try CoinGeckoMarketChart.parse(
            bytes(#"{"prices":[[2000,2],[1000,1],[3000,null],[4000],"x",[5000,0]]}"#)
        ).get()
        #expect(page.candles.map(\.start) == [1000, 2000])
        #expect(page.skipped == 4)
    }

    @Test func malformedBodies() {
        #expect(
            CoinGeckoMarketChart.parse(bytes(#"{"error":"coin not found"}"#))
                == .failure(FeedPayloadError("CoinGecko market_chart: error: coin not found")))
        #expect(
            CoinGeckoMarketChart.parse(bytes(#"{"status":{"error_code":429,"error_message":"Rate limited"}}"#))
                == .failure(FeedPayloadError("CoinGecko market_chart: error: Rate limited")))
        #expect(
            CoinGeckoMarketChart.parse(bytes(#"{"market_caps":[]}"#))
                == .failure(FeedPayloadError(#"CoinGecko market_chart: no "prices" array"#)))
        #expect(
            CoinGeckoMarketChart.parse(bytes("[]"))
                == .failure(FeedPayloadError("CoinGecko market_chart: expected an object, found an array")))
    }

    @Test func requestAndDays() {
        #expect(
            CoinGeckoMarketChart.request(id: "bitcoin", days: 8).url
                == "https://api.coingecko.com/api/v3/coins/bitcoin/market_chart?vs_currency=usd&days=8")
        // 7 days reach back 7 days whatever the hour: one more day than the span.
        #expect(CoinGeckoMarketChart.days(covering: 7 * 86_400_000) == 8)
        #expect(CoinGeckoMarketChart.days(covering: 7 * 86_400_000 + 1) == 9)
        #expect(CoinGeckoMarketChart.days(covering: 3_600_000) == 2)
    }
}

@Suite struct CoinRankingHistoryTests {
    @Test func documentedShape() throws {
        let page = try CoinRankingHistory.parse(try candleFixture("coinranking_coin_history_shape.json")).get()
        let points: [(Int64, Double)] = [
            (1_585_062_000_000, 9335.3004209165), (1_585_065_600_000, 9329.4331700521),
            (1_585_072_800_000, 9370.9993109108)
        ]
        #expect(
            page
                == CandlePage(
                    candles: points.map {
                        Candle(start: $0.0, end: $0.0 + 1, open: $0.1, high: $0.1, low: $0.1, close: $0.1)
                    },
                    skipped: 1))
    }

    @Test func malformedBodies() {
        #expect(
            CoinRankingHistory.parse(bytes(#"{"status":"fail","type":"COIN_NOT_FOUND","message":"Coin not found"}"#))
                == .failure(FeedPayloadError("Coinranking coin history: status fail: Coin not found")))
        #expect(
            CoinRankingHistory.parse(bytes(#"{"status":"success","data":{}}"#))
                == .failure(FeedPayloadError(#"Coinranking coin history: no "data.history" array"#)))
        #expect(
            CoinRankingHistory.parse(bytes("[]"))
                == .failure(FeedPayloadError("Coinranking coin history: expected an object, found an array")))
        #expect(
            CoinRankingHistory.parse(bytes("{"))
                == .failure(
                    FeedPayloadError(
                        #"Coinranking coin history: not JSON at byte 1 (expected '"', found end of input)"#)))
    }

    @Test func requestAndPeriods() {
        #expect(
            CoinRankingHistory.request(uuid: "Qwsogvtv82FCd", period: .week).url
                == "https://api.coinranking.com/v2/coin/Qwsogvtv82FCd/history?timePeriod=7d")
        #expect(CoinRankingHistory.Period.covering(7 * 86_400_000) == .week)
        #expect(CoinRankingHistory.Period.covering(7 * 86_400_000 + 1) == .month)
        #expect(CoinRankingHistory.Period.covering(400 * 86_400_000) == .threeYears)
        #expect(CoinRankingHistory.Period.covering(6 * 365 * 86_400_000) == .fiveYears)
    }
}

/// Each source's request sent with libcurl to a local server that answers only the documented
/// path and query, with the source's fixture: what a backfill step will do.
@Suite("candle requests through the HTTP client")
struct CandleRequestTests {
    @Test func everySourceFetchesAndParses() async throws {
        let seen = Mutex<[String]>([])
        let router = Router()
        let routes: [(String, [String: String], String)] = [
            (
                "/spot/api/v3.2/ohlcv",
                ["symbol": "BTC-USD", "resolution": "1", "start": "1624987200000", "end": "1624987500000"],
                "btse_spot_ohlcv_doc_example.json"
            ),
            (
                "/futures/api/v2.1/ohlcv",
                ["symbol": "BTCPFC", "resolution": "1", "start": "1624987200000", "end": "1624987500000"],
                "btse_futures_ohlcv_doc_example.json"
            ),
            (
                "/markets/BTC_USDT/candles",
                ["interval": "HOUR_1", "startTime": "1649023200000", "endTime": "1649030400000", "limit": "500"],
                "poloniex_v3_candles_shape.json"
            ),
            (
                "/api/v3/coins/bitcoin/market_chart", ["vs_currency": "usd", "days": "2"],
                "coingecko_market_chart_doc_example.json"
            ),
            ("/v2/coin/Qwsogvtv82FCd/history", ["timePeriod": "3h"], "coinranking_coin_history_shape.json")
        ]
        for (path, query, file) in routes {
            let body = try candleFixture(file)
            router.get(RouterPath(path)) { request, _ -> Response in
                let params = Dictionary(request.uri.queryParameters.map { (String($0.key), String($0.value)) }) {
                    a, _ in a
                }
                guard params == query else { return Response(status: .badRequest) }
                seen.withLock { $0.append(path) }
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(bytes: body)))
            }
        }
        try await LoopbackServer.with(router) { port in
            let base = "http://127.0.0.1:\(port)"
            let http = PatientHTTPClient(NIOHTTPClient())
            let spot = try await http.fetch(
                BTSECandles.request(
                    .spot, symbol: "BTC-USD", resolution: .minute,
                    start: 1_624_987_200_000, end: 1_624_987_500_000, endpoint: base))
            #expect(try BTSECandles.parse(spot, resolution: .minute).get().candles.count == 2)
            let futures = try await http.fetch(
                BTSECandles.request(
                    .futures, symbol: "BTCPFC", resolution: .minute,
                    start: 1_624_987_200_000, end: 1_624_987_500_000, endpoint: base))
            #expect(try BTSECandles.parse(futures, resolution: .minute, kind: .futures).get().candles.count == 2)
            let polo = try await http.fetch(
                PoloniexCandles.request(
                    symbol: "BTC_USDT", interval: .hour,
                    start: 1_649_023_200_000, end: 1_649_030_400_000, endpoint: base))
            #expect(try PoloniexCandles.parse(polo, interval: .hour).get().candles.last?.close == 47059.39)
            let gecko = try await http.fetch(CoinGeckoMarketChart.request(id: "bitcoin", days: 2, endpoint: base))
            #expect(try CoinGeckoMarketChart.parse(gecko).get().candles.count == 3)
            let ranking = try await http.fetch(
                CoinRankingHistory.request(uuid: "Qwsogvtv82FCd", period: .threeHours, endpoint: base))
            #expect(try CoinRankingHistory.parse(ranking).get().candles.count == 3)
        }
        #expect(seen.withLock { $0 } == routes.map(\.0))
    }
}

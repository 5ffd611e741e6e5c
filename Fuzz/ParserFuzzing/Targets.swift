import AlertFeeds
import AlertModel
import AlertRules
import AlertSinks
import Foundation

/// One parser under fuzzing: its name on the command line, where its seeds come from, and how
/// one input is fed to it. `run` returns a small number derived from the result, so the work
/// cannot be optimised away.
public struct FuzzTarget: Sendable {
    public let name: String
    /// Files (relative to the repository or the fixtures folder) whose content seeds this parser.
    let seedFiles: [SeedFile]
    /// Inputs written here because no recorded file has them (valid frames of every shape).
    let builtInSeeds: [String]
    public let run: @Sendable ([UInt8]) -> Int

    enum SeedFile: Sendable {
        /// The whole file is one input.
        case whole(String)
        /// Each line is one input.
        case lines(String)
        /// Every file in the folder is one input.
        case folder(String)
        /// The same, under the fixtures folder.
        case fixture(String), fixtureLines(String)
    }
}

extension FuzzTarget {
    /// Every parser that reads bytes from outside: rule files, tick files, exchange payloads.
    public static let all: [FuzzTarget] = [
        FuzzTarget(
            name: "rules", seedFiles: [.folder("Rules")],
            builtInSeeds: [
                #"{"version":1,"rules":[{"id":"a","symbol":"BTC","when":{"price":{"above":1}},"cooldown":"5m"}]}"#,
                #"{"version":1,"sinks":{"h":{"type":"webhook","url":"http://127.0.0.1:1/x","timeout":"5s","retry":{"backoff":"1s","maxAge":"1h"}},"e":{"type":"exec","command":["/bin/true"],"timeout":"9223372036854775807ms"}},"defaults":{"notify":["h"]},"rules":[{"id":"b","match":{"quote":"USD"},"when":{"changePercent":{"over":"1h","above":5}},"cooldown":"106751991167d"}]}"#
            ]
        ) { bytes in
            switch RuleLoader.load([RuleSource(path: "fuzz.json", bytes: bytes)]) {
            case .success(let set): return set.rules.count
            case .failure(let errors): return errors.diagnostics.count
            }
        },
        FuzzTarget(
            name: "tick-line", seedFiles: [.lines("Samples/ticks.jsonl")],
            builtInSeeds: [
                #"{"time": 1700000000000, "symbol": "BTC", "price": 43000.5, "change24h": -1.25}"#,
                #"{"time":"2023-11-14T22:13:20.123+01:00","symbol":"E\u0301TH","price":"x","change24h":null,"extra":[{"a":[1,2,{}]}]}"#,
                #"{"time": 1700000000000, "source": "binance", "symbol": "BTC/USDT", "price": 43000.5, "change24h": -1.2, "volume24h": 1.9e9}"#,
                #"{"time":1,"source":"kraken-2","symbol":"ETH/USD","price":1,"volume24h":-1e999}"#
            ]
        ) { bytes in
            switch TickLineParser.parse(bytes) {
            case .success(let tick): return tick.symbol.utf8.count
            case .failure: return -1
            }
        },
        FuzzTarget(
            name: "btse-coinindex",
            seedFiles: [
                .fixture("btse_coinIndex_README_snippet.txt"),
                .fixtureLines("btse_ws_tradeHistoryApi_samples.jsonl")
            ],
            builtInSeeds: [
                #"{"topic":"coinIndex","id":null,"data":{"BTC_1":{"id":"BTC","name":"BTC","type":1,"price":43210.5},"ETH_1":{"price":"2345.67","type":1},"NUL_1":{"price":null},"TINY_1":{"price":6.3e-9},"TINS_1":{"price":"1.0E-5"}}}"#,
                #"{"event":"subscribe","channel":["coinIndex"]}"#, "connect success", "pong",
                #"{"event":"error","message":"bad topic"}"#
            ]
        ) { bytes in frameSize(BTSECoinIndex.parseCounting(bytes, receivedAt: 1_700_000_000_000)) },
        FuzzTarget(
            name: "btse-market-list",
            seedFiles: [
                .whole("Samples/btse-markets.json"),
                .fixture("btse_futures_inquire_initial_market.json")
            ],
            builtInSeeds: [
                #"[{"symbol":"BTC-USD","marketName":"BTC-USD","baseCurrency":"BTC","quoteCurrency":"USD","future":false,"active":true},{"symbol":null},7]"#
            ]
        ) { bytes in
            (try? BTSEMarketList.decodeCounting(Data(bytes), source: "fuzz").markets.count) ?? -1
        },
        FuzzTarget(
            name: "btse-market-summary", seedFiles: [],
            builtInSeeds: [
                #"[{"symbol":"BTCPFC","last":36365,"percentageChange":4.973731309,"base":"BTC","quote":"USD","active":true,"futures":false},{"symbol":"BTC-USD","last":36976,"lowestAsk":37012,"percentageChange":-4.633438649,"minOrderSize":1.0E-5,"availableSettlement":null,"base":"BTC","quote":"USD","active":true},{"symbol":"ETH-PERP","last":"1800.5","percentageChange":"2.5","base":"ETH","quote":"USD","active":true,"futures":true},{"symbol":"eth-eur","last":null,"base":"eth","quote":"eur"},{"last":1},3]"#,
                #"{"code":-1,"msg":null,"data":null,"success":false}"#
            ]
        ) { bytes in
            switch BTSEMarketSummary.parse(bytes) {
            case .success(let summaries): return BTSEMarketSummary.changeByIndexSymbol(summaries).count
            case .failure: return -1
            }
        },
        FuzzTarget(
            name: "poloniex-ticker", seedFiles: [.fixtureLines("poloniex_v3_ws_ticker_samples.jsonl")],
            builtInSeeds: [
                #"{"event":"subscribe","channel":"ticker","symbols":["BTC_USDT"]}"#, #"{"event":"pong"}"#
            ]
        ) { bytes in frameSize(PoloniexTicker.parseCounting(bytes, receivedAt: 1_700_000_000_000)) },
        FuzzTarget(
            name: "poloniex-ticker24h", seedFiles: [.fixture("poloniex_v3_rest_ticker24h_BTC_USDT.json")],
            builtInSeeds: []
        ) { bytes in
            frameSize(PoloniexTicker24h.parseCounting(bytes, receivedAt: 1_700_000_000_000))
        },
        FuzzTarget(
            name: "poloniex-markets", seedFiles: [],
            builtInSeeds: [
                #"[{"symbol":"BTC_USDT","baseCurrencyName":"BTC","quoteCurrencyName":"USDT","displayName":"BTC/USDT","state":"NORMAL","visibleStartTime":1659018819512,"symbolTradeLimit":{"symbol":"BTC_USDT","priceScale":2,"minQuantity":"0.000001"},"crossMargin":{"supportCrossMargin":true,"maxLeverage":"3"}},{"symbol":"OLD_USDT","baseCurrencyName":"OLD","quoteCurrencyName":"USDT","displayName":"OLD/USDT","state":"PAUSE"},{"symbol":null},{"baseCurrencyName":"X"},7]"#
            ]
        ) { bytes in
            switch PoloniexMarkets.parse(bytes) {
            case .success(let markets): return markets.count
            case .failure: return -1
            }
        },
        FuzzTarget(
            name: "poloniex-legacy-frame", seedFiles: [.fixtureLines("poloniex_legacy_ws_samples.jsonl")],
            builtInSeeds: []
        ) { bytes in
            frameSize(PoloniexLegacyFrame.parseCounting(bytes, receivedAt: 1_700_000_000_000, pairs: legacyPairs))
        },
        FuzzTarget(
            name: "poloniex-legacy-ticker",
            seedFiles: [
                .fixture("poloniex_legacy_returnTicker.json"),
                .fixture("poloniex_legacy_currency_pair_ids.json")
            ], builtInSeeds: []
        ) { bytes in
            let ticker =
                (try? PoloniexLegacyTicker.parse(bytes, receivedAt: 1_700_000_000_000).get()).map { _ in 1 } ?? 0
            let ids = (try? PoloniexLegacyTicker.pairIDs(bytes).get())?.count ?? -1
            return ticker + ids
        },
        FuzzTarget(
            name: "coingecko", seedFiles: [.fixture("coingecko_coins_markets_oas_example.json")], builtInSeeds: []
        ) { bytes in
            let ticks = frameSize(CoinGeckoMarkets.ticksCounting(bytes, receivedAt: 1_700_000_000_000))
            return ticks + ((try? CoinGeckoMarkets.markets(bytes).get())?.count ?? -1)
        },
        FuzzTarget(
            name: "coinranking", seedFiles: [.fixture("coinranking_v2_coins_items_with_nulls.json")], builtInSeeds: []
        ) { bytes in
            let ticks = frameSize(CoinRankingCoins.ticksCounting(bytes, receivedAt: 1_700_000_000_000))
            return ticks + ((try? CoinRankingCoins.markets(bytes).get())?.count ?? -1)
        },
        FuzzTarget(
            name: "control-frame", seedFiles: [.fixtureLines("poloniex_v3_ws_ticker_samples.jsonl")],
            builtInSeeds: [
                #"{"event":"error","message":"bad topic"}"#, #"{"event":"error","msg":7,"error":"x"}"#,
                #"{"event":"ERROR"}"#
            ]
        ) { bytes in ControlFrame.errorMessage(in: bytes)?.utf8.count ?? -1 },
        FuzzTarget(
            name: "binance-frame",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/binance_24hrTicker.jsonc"),
                .whole("Tests/Fixtures/exchanges/binance_miniTicker.jsonc")
            ],
            builtInSeeds: [
                #"{"e":"24hrTicker","E":1672515782136,"s":"BNBBTC","P":"250.00","c":"0.0025","q":"18"}"#,
                #"{"stream":"bnbbtc@ticker","data":{"e":"24hrTicker","E":1,"s":"BNBBTC","c":"1","P":"x","q":null}}"#,
                #"[{"e":"24hrTicker","E":1,"s":"A","c":"1"},{"e":"24hrTicker","E":2,"s":"B"}]"#,
                #"{"result":null,"id":1}"#, #"{"code":2,"msg":"Invalid request","id":1}"#,
                #"{"error":{"code":-1,"msg":"x"},"id":2}"#,
                #"{"e":"serverShutdown","E":1}"#,
                // The hot shape the token reader takes, as the look-alike writes it, and with numbers.
                #"{"e":"24hrTicker","E":1700000000000,"s":"BTCUSDT","p":"120.5","P":"0.28","w":"43000.1","x":"43000","c":"43120.5","Q":"1","b":"43120.5","B":"1","a":"43120.5","A":"1","o":"43000","h":"43500","l":"42800","v":"1234.5","q":"53123456.7","O":1699913600000,"C":1700000000000,"F":0,"L":0,"n":0}"#,
                #"{"e":"24hrTicker","E":1700000000001,"s":"ETHUSDT","c":2250.25,"P":-1.5,"q":1.5e9}"#
            ]
        ) { bytes in
            exchangeFrameSize(
                agreed(BinanceTicker.parse(bytes, reading: .tokens), BinanceTicker.parse(bytes, reading: .tree)))
        },
        FuzzTarget(
            name: "coinbase-frame",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/coinbase_advanced_trade_ticker.json"),
                .whole("Tests/Fixtures/exchanges/coinbase_advanced_trade_heartbeats.json")
            ],
            builtInSeeds: [
                #"{"channel":"subscriptions","events":[{"subscriptions":{"ticker":["BTC-USD"]}}]}"#,
                #"{"type":"error","message":"failure to subscribe"}"#,
                #"{"channel":"ticker","timestamp":"2023-02-09T20:30:37Z","events":[{"tickers":[{"product_id":"A-USD","price":"1","volume_24_h":"1e308"},{"product_id":"B"}]}]}"#,
                #"{"channel":"ticker","client_id":"","timestamp":"2023-02-09T20:30:37.167359596Z","sequence_num":7,"events":[{"type":"update","tickers":[{"type":"ticker","product_id":"BTC-USD","price":"21932.98","volume_24_h":"16038.28770938","low_24_h":"21835.29","high_24_h":"23011.18","low_52_w":"15460","high_52_w":"48240","price_percent_chg_24_h":"-4.15775596190603"},{"type":"ticker","product_id":"ETH-USD","price":1550.1,"volume_24_h":100,"price_percent_chg_24_h":1.5}]}]}"#
            ]
        ) { bytes in
            let tokens = CoinbaseTicker.read(bytes, reading: .tokens), tree = CoinbaseTicker.read(bytes, reading: .tree)
            return exchangeFrameSize(agreed(tokens.frame, tree.frame)) + Int(
                agreed(tokens.sequence, tree.sequence) ?? 0) % 2
        },
        FuzzTarget(
            name: "kraken-frame",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/kraken_v2_ticker_snapshot.json"),
                .whole("Tests/Fixtures/exchanges/kraken_v2_heartbeat.json")
            ],
            builtInSeeds: [
                #"{"method":"pong","req_id":101}"#,
                #"{"method":"subscribe","result":{"channel":"ticker","symbol":"XBT/USD"},"success":true}"#,
                #"{"method":"subscribe","error":"Currency pair not supported","success":false}"#,
                #"{"channel":"status","data":[]}"#,
                #"{"channel":"ticker","type":"update","data":[{"symbol":"XBT/USD","last":1,"volume":1e300,"vwap":1e300,"timestamp":"2023-09-25T09:04:31Z"}]}"#,
                #"{"channel":"ticker","type":"update","data":[{"symbol":"ETH/USD","bid":2600.1,"bid_qty":1,"ask":2600.2,"ask_qty":1,"last":2600.1,"volume":1200.5,"vwap":2595.3,"low":2580,"high":2620,"change":10.5,"change_pct":0.39,"timestamp":"2023-09-25T09:04:31.742599Z"}]}"#
            ]
        ) { bytes in
            exchangeFrameSize(
                agreed(KrakenTicker.parse(bytes, reading: .tokens), KrakenTicker.parse(bytes, reading: .tree)))
        },
        FuzzTarget(
            name: "bybit-frame",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/bybit_v5_spot_ticker.json"),
                .whole("Tests/Fixtures/exchanges/bybit_v5_linear_ticker.json")
            ],
            builtInSeeds: [
                #"{"success":true,"ret_msg":"pong","conn_id":"x","req_id":"","op":"ping"}"#,
                #"{"success":false,"ret_msg":"error:handler not found","op":"subscribe"}"#,
                #"{"topic":"tickers.A","type":"delta","ts":1,"data":{"symbol":"A","lastPrice":"1"}}"#,
                #"{"topic":"tickers.ETHUSDT","ts":1673853746003,"type":"snapshot","cs":2588407389,"data":{"symbol":"ETHUSDT","lastPrice":"1609.77","highPrice24h":"1626.99","lowPrice24h":"1575","prevPrice24h":"1604.93","volume24h":"6780.866843","turnover24h":"10946527.22907118","price24hPcnt":"0.0196","usdIndexPrice":"1610.24"}}"#,
                #"{"topic":"tickers.SOLUSDT","ts":1673853746004,"data":{"symbol":"SOLUSDT","lastPrice":21.5,"price24hPcnt":-0.01,"turnover24h":1e6}}"#
            ]
        ) { bytes in
            exchangeFrameSize(
                agreed(BybitTicker.parse(bytes, reading: .tokens), BybitTicker.parse(bytes, reading: .tree)))
        },
        FuzzTarget(
            name: "okx-frame",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/okx_v5_tickers_captured_spot.json"),
                .whole("Tests/Fixtures/exchanges/okx_v5_tickers_captured_swap.json")
            ],
            builtInSeeds: [
                "pong", #"{"event":"subscribe","arg":{"channel":"tickers","instId":"BTC-USDT"}}"#,
                #"{"event":"error","code":"60012","msg":"Invalid request"}"#,
                #"{"arg":{"channel":"tickers"},"data":[{"instType":"SPOT","instId":"A-B","last":"1","open24h":"0","ts":"1"}]}"#,
                #"{"arg":{"channel":"tickers","instId":"ETH-USDT"},"data":[{"instType":"SPOT","instId":"ETH-USDT","last":"2250.5","lastSz":"1","askPx":"2250.6","askSz":"1","bidPx":"2250.4","bidSz":"1","open24h":"2200","high24h":"2300","low24h":"2180","volCcy24h":"53123456.7","vol24h":"1234.5","ts":"1700000000000","sodUtc0":"2200","sodUtc8":"2200"}]}"#,
                #"{"arg":{"channel":"tickers","instId":"SOL-USDT"},"data":[{"instId":"SOL-USDT","last":21.5,"open24h":20,"volCcy24h":1e6,"ts":1700000000001}]}"#
            ]
        ) { bytes in
            exchangeFrameSize(agreed(OKXTicker.parse(bytes, reading: .tokens), OKXTicker.parse(bytes, reading: .tree)))
        },
        FuzzTarget(
            name: "binance-rest",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/binance_exchangeInfo.json"),
                .whole("Tests/Fixtures/exchanges/binance_klines.json")
            ],
            builtInSeeds: [#"{"code":-1121,"msg":"Invalid symbol."}"#]
        ) { bytes in
            restSize(BinanceMarkets.parse(bytes), BinanceCandles.parse(bytes, interval: .hour))
        },
        FuzzTarget(
            name: "coinbase-rest",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/coinbase_products.json"),
                .whole("Tests/Fixtures/exchanges/coinbase_candles.json")
            ],
            builtInSeeds: [#"{"error":"NOT_FOUND","message":"x"}"#]
        ) { bytes in
            restSize(CoinbaseMarkets.parse(bytes), CoinbaseCandles.parse(bytes, interval: .minute))
        },
        FuzzTarget(
            name: "kraken-rest",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/kraken_AssetPairs.json"),
                .whole("Tests/Fixtures/exchanges/kraken_OHLC.json")
            ],
            builtInSeeds: [#"{"error":["EQuery:Unknown asset pair"]}"#]
        ) { bytes in
            restSize(KrakenMarkets.parse(bytes), KrakenCandles.parse(bytes, interval: .day))
        },
        FuzzTarget(
            name: "bybit-rest",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/bybit_instruments_spot.json"),
                .whole("Tests/Fixtures/exchanges/bybit_kline.json")
            ],
            builtInSeeds: [#"{"retCode":10001,"retMsg":"params error","result":{}}"#]
        ) { bytes in
            restSize(BybitMarkets.parse(bytes), BybitCandles.parse(bytes, interval: .hour))
        },
        FuzzTarget(
            name: "okx-rest",
            seedFiles: [
                .whole("Tests/Fixtures/exchanges/okx_instruments_spot.json"),
                .whole("Tests/Fixtures/exchanges/okx_candles.json")
            ],
            builtInSeeds: [#"{"code":"51001","msg":"Instrument ID does not exist","data":[]}"#]
        ) { bytes in
            restSize(OKXMarkets.parse(bytes), OKXCandles.parse(bytes, interval: .minute))
        },
        FuzzTarget(
            name: "binance-tickers", seedFiles: [.whole("Tests/Fixtures/exchanges/binance_ticker24hr.json")],
            builtInSeeds: [#"{"code":-1121,"msg":"Invalid symbol."}"#, #"[{"symbol":"A","lastPrice":"1"}]"#]
        ) { bytes in tickersSize(BinanceTickers.parse(bytes)) },
        FuzzTarget(
            name: "coinbase-tickers", seedFiles: [.whole("Tests/Fixtures/exchanges/coinbase_products.json")],
            builtInSeeds: [#"{"products":[{"product_id":"A-B","price":"1","volume_24h":"1e308"}]}"#]
        ) { bytes in tickersSize(CoinbaseTickers.parse(bytes, receivedAt: 1)) },
        FuzzTarget(
            name: "kraken-tickers", seedFiles: [.whole("Tests/Fixtures/exchanges/kraken_Ticker.json")],
            builtInSeeds: [#"{"error":[],"result":{"A":{"c":["1"],"v":["1","2"],"p":["1"]}}}"#]
        ) { bytes in tickersSize(KrakenTickers.parse(bytes, receivedAt: 1)) },
        FuzzTarget(
            name: "bybit-tickers", seedFiles: [.whole("Tests/Fixtures/exchanges/bybit_tickers_spot.json")],
            builtInSeeds: [#"{"retCode":0,"result":{"list":[{"symbol":"A","lastPrice":"1"}]},"time":"x"}"#]
        ) { bytes in tickersSize(BybitTickers.parse(bytes)) },
        FuzzTarget(
            name: "okx-tickers", seedFiles: [.whole("Tests/Fixtures/exchanges/okx_tickers_spot.json")],
            builtInSeeds: [#"{"code":"0","data":[{"instId":"A-B","last":"1","open24h":"0","ts":"1"}]}"#]
        ) { bytes in tickersSize(OKXTickers.parse(bytes)) }
    ]

    public static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// A few pair ids, as the legacy feed learns them from returnTicker.
    static let legacyPairs: [Int: String] = [149: "USDT_BTC", 150: "USDT_ETH", 162: "BTC_XMR", 1002: "X", 0: "Z"]
}

/// Ticks plus skipped entries, or -1 for an invalid frame and 0 for a control one.
private func frameSize(_ parsed: ParsedFrame) -> Int {
    switch parsed.frame {
    case .ticks(let ticks): return ticks.count + parsed.skipped
    case .control: return 0
    case .invalid: return -1
    }
}

/// Ticks plus skipped entries, -1 for a dropped frame, the text's length for a control frame.
private func exchangeFrameSize(_ frame: ExchangeFrame) -> Int {
    switch frame {
    case .ticks(let ticks, let skipped): return ticks.count + skipped
    case .control(let control):
        switch control {
        case .subscribed(let text), .error(let text), .notice(let text): return text.utf8.count
        case .heartbeat, .pong: return 0
        }
    case .dropped: return -1
    }
}

/// The token reading's result, once checked to be the tree reading's (`FrameReading`): a
/// difference stops the child like a crash, so the campaign names the input that shows it.
private func agreed<T: Equatable>(_ tokens: T, _ tree: T) -> T {
    precondition(tokens == tree, "the token and tree readings of a frame differ")
    return tokens
}

/// Markets plus candles and skipped candles; -1 for each body refused.
private func restSize(
    _ markets: Result<[ExchangeMarket], FeedPayloadError>, _ candles: Result<CandlePage, FeedPayloadError>
) -> Int {
    let m = (try? markets.get())?.count ?? -1
    let c = (try? candles.get()).map { $0.candles.count + $0.skipped } ?? -1
    return m + c
}

/// Ticks of a 24-hour ticker body, -1 when refused.
private func tickersSize(_ ticks: Result<[ExchangeTick], FeedPayloadError>) -> Int {
    (try? ticks.get())?.count ?? -1
}

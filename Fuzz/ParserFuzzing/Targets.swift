import AlertCore
import AlertFeeds
import AlertRules
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
        FuzzTarget(name: "rules", seedFiles: [.folder("Rules")], builtInSeeds: [
            #"{"version":1,"rules":[{"id":"a","symbol":"BTC","when":{"price":{"above":1}},"cooldown":"5m"}]}"#,
            #"{"version":1,"sinks":{"h":{"type":"webhook","url":"http://127.0.0.1:1/x","timeout":"5s","retry":{"backoff":"1s","maxAge":"1h"}},"e":{"type":"exec","command":["/bin/true"],"timeout":"9223372036854775807ms"}},"defaults":{"notify":["h"]},"rules":[{"id":"b","match":{"quote":"USD"},"when":{"changePercent":{"over":"1h","above":5}},"cooldown":"106751991167d"}]}"#,
        ]) { bytes in
            switch RuleLoader.load([RuleSource(path: "fuzz.json", bytes: bytes)]) {
            case .success(let set): return set.rules.count
            case .failure(let errors): return errors.diagnostics.count
            }
        },
        FuzzTarget(name: "tick-line", seedFiles: [.lines("Samples/ticks.jsonl")], builtInSeeds: [
            #"{"time": 1700000000000, "symbol": "BTC", "price": 43000.5, "change24h": -1.25}"#,
            #"{"time":"2023-11-14T22:13:20.123+01:00","symbol":"E\u0301TH","price":"x","change24h":null,"extra":[{"a":[1,2,{}]}]}"#,
        ]) { bytes in
            switch TickLineParser.parse(bytes) {
            case .success(let tick): return tick.symbol.utf8.count
            case .failure: return -1
            }
        },
        FuzzTarget(name: "btse-coinindex", seedFiles: [.fixture("btse_coinIndex_README_snippet.txt"),
                                                        .fixtureLines("btse_ws_tradeHistoryApi_samples.jsonl")], builtInSeeds: [
            #"{"topic":"coinIndex","id":null,"data":{"BTC_1":{"id":"BTC","name":"BTC","type":1,"price":43210.5},"ETH_1":{"price":"2345.67","type":1},"NUL_1":{"price":null},"TINY_1":{"price":6.3e-9},"TINS_1":{"price":"1.0E-5"}}}"#,
            #"{"event":"subscribe","channel":["coinIndex"]}"#, "connect success", "pong",
            #"{"event":"error","message":"bad topic"}"#,
        ]) { bytes in frameSize(BTSECoinIndex.parseCounting(bytes, receivedAt: 1_700_000_000_000)) },
        FuzzTarget(name: "btse-market-list", seedFiles: [.whole("Samples/btse-markets.json"),
                                                          .fixture("btse_futures_inquire_initial_market.json")],
                   builtInSeeds: [#"[{"symbol":"BTC-USD","marketName":"BTC-USD","baseCurrency":"BTC","quoteCurrency":"USD","future":false,"active":true},{"symbol":null},7]"#]) { bytes in
            (try? BTSEMarketList.decodeCounting(Data(bytes), source: "fuzz").markets.count) ?? -1
        },
        FuzzTarget(name: "btse-market-summary", seedFiles: [], builtInSeeds: [
            #"[{"symbol":"BTCPFC","last":36365,"percentageChange":4.973731309,"base":"BTC","quote":"USD","active":true,"futures":false},{"symbol":"BTC-USD","last":36976,"lowestAsk":37012,"percentageChange":-4.633438649,"minOrderSize":1.0E-5,"availableSettlement":null,"base":"BTC","quote":"USD","active":true},{"symbol":"ETH-PERP","last":"1800.5","percentageChange":"2.5","base":"ETH","quote":"USD","active":true,"futures":true},{"symbol":"eth-eur","last":null,"base":"eth","quote":"eur"},{"last":1},3]"#,
            #"{"code":-1,"msg":null,"data":null,"success":false}"#,
        ]) { bytes in
            switch BTSEMarketSummary.parse(bytes) {
            case .success(let summaries): return BTSEMarketSummary.changeByIndexSymbol(summaries).count
            case .failure: return -1
            }
        },
        FuzzTarget(name: "poloniex-ticker", seedFiles: [.fixtureLines("poloniex_v3_ws_ticker_samples.jsonl")], builtInSeeds: [
            #"{"event":"subscribe","channel":"ticker","symbols":["BTC_USDT"]}"#, #"{"event":"pong"}"#,
        ]) { bytes in frameSize(PoloniexTicker.parseCounting(bytes, receivedAt: 1_700_000_000_000)) },
        FuzzTarget(name: "poloniex-ticker24h", seedFiles: [.fixture("poloniex_v3_rest_ticker24h_BTC_USDT.json")], builtInSeeds: []) { bytes in
            frameSize(PoloniexTicker24h.parseCounting(bytes, receivedAt: 1_700_000_000_000))
        },
        FuzzTarget(name: "poloniex-markets", seedFiles: [], builtInSeeds: [
            #"[{"symbol":"BTC_USDT","baseCurrencyName":"BTC","quoteCurrencyName":"USDT","displayName":"BTC/USDT","state":"NORMAL","visibleStartTime":1659018819512,"symbolTradeLimit":{"symbol":"BTC_USDT","priceScale":2,"minQuantity":"0.000001"},"crossMargin":{"supportCrossMargin":true,"maxLeverage":"3"}},{"symbol":"OLD_USDT","baseCurrencyName":"OLD","quoteCurrencyName":"USDT","displayName":"OLD/USDT","state":"PAUSE"},{"symbol":null},{"baseCurrencyName":"X"},7]"#,
        ]) { bytes in
            switch PoloniexMarkets.parse(bytes) {
            case .success(let markets): return markets.count
            case .failure: return -1
            }
        },
        FuzzTarget(name: "poloniex-legacy-frame", seedFiles: [.fixtureLines("poloniex_legacy_ws_samples.jsonl")], builtInSeeds: []) { bytes in
            frameSize(PoloniexLegacyFrame.parseCounting(bytes, receivedAt: 1_700_000_000_000, pairs: legacyPairs))
        },
        FuzzTarget(name: "poloniex-legacy-ticker", seedFiles: [.fixture("poloniex_legacy_returnTicker.json"),
                                                                .fixture("poloniex_legacy_currency_pair_ids.json")], builtInSeeds: []) { bytes in
            let ticker = (try? PoloniexLegacyTicker.parse(bytes, receivedAt: 1_700_000_000_000).get()).map { _ in 1 } ?? 0
            let ids = (try? PoloniexLegacyTicker.pairIDs(bytes).get())?.count ?? -1
            return ticker + ids
        },
        FuzzTarget(name: "coingecko", seedFiles: [.fixture("coingecko_coins_markets_oas_example.json")], builtInSeeds: []) { bytes in
            let ticks = frameSize(CoinGeckoMarkets.ticksCounting(bytes, receivedAt: 1_700_000_000_000))
            return ticks + ((try? CoinGeckoMarkets.markets(bytes).get())?.count ?? -1)
        },
        FuzzTarget(name: "coinranking", seedFiles: [.fixture("coinranking_v2_coins_items_with_nulls.json")], builtInSeeds: []) { bytes in
            let ticks = frameSize(CoinRankingCoins.ticksCounting(bytes, receivedAt: 1_700_000_000_000))
            return ticks + ((try? CoinRankingCoins.markets(bytes).get())?.count ?? -1)
        },
        FuzzTarget(name: "control-frame", seedFiles: [.fixtureLines("poloniex_v3_ws_ticker_samples.jsonl")], builtInSeeds: [
            #"{"event":"error","message":"bad topic"}"#, #"{"event":"error","msg":7,"error":"x"}"#, #"{"event":"ERROR"}"#,
        ]) { bytes in ControlFrame.errorMessage(in: bytes)?.utf8.count ?? -1 },
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

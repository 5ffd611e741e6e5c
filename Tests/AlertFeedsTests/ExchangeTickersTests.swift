import AlertModel
import Testing

@testable import AlertFeeds

/// The 24-hour ticker bodies of the five v3 exchanges (`check --source`, `markets`): the
/// documentation examples give the figures of rules v3 §2, and error bodies are refused with
/// the exchange's words.
@Suite struct ExchangeTickersTests {
    @Test func binance() throws {
        let ticks = try BinanceTickers.parse(try exchangeFixture("binance_ticker24hr.json")).get()
        #expect(ticks.map(\.symbol) == ["ETHBTC", "BNBBTC"])
        #expect(
            ticks[1]
                == ExchangeTick(symbol: "BNBBTC", time: 1_499_869_899_041, price: 0.0025, change24h: 250, volume24h: 18)
        )
        let error = BinanceTickers.parse(Array(#"{"code":-1121,"msg":"Invalid symbol."}"#.utf8))
        #expect(throws: FeedPayloadError.self) { try error.get() }
        if case .failure(let failure) = error { #expect(failure.reason.contains("Invalid symbol.")) }
    }

    @Test func coinbaseSkipsOtherProductTypesAndEntriesWithoutPrice() throws {
        let ticks = try CoinbaseTickers.parse(try exchangeFixture("coinbase_products.json"), receivedAt: 7).get()
        #expect(ticks.count == 1)
        #expect(ticks[0].symbol == "BTC-USD" && ticks[0].time == 7 && ticks[0].change24h == 1.2)
        #expect(close(ticks[0].volume24h, 12000.5 * 37000.01))
    }

    @Test func krakenHasVolumeTimesVWAPAndNoChange() throws {
        let ticks = try KrakenTickers.parse(try exchangeFixture("kraken_Ticker.json"), receivedAt: 9).get()
        #expect(ticks.map(\.symbol) == ["XXBTZUSD", "XETHZUSD"])
        #expect(ticks[0].price == 30303.2 && ticks[0].change24h == nil && ticks[0].time == 9)
        #expect(close(ticks[0].volume24h, 4412.73601799 * 30689.13205))
        #expect(throws: FeedPayloadError.self) {
            try KrakenTickers.parse(Array(#"{"error":["EQuery:Unknown asset pair"]}"#.utf8), receivedAt: 0).get()
        }
    }

    @Test func bybitTakesTheResponseTimeAndPercent() throws {
        let ticks = try BybitTickers.parse(try exchangeFixture("bybit_tickers_spot.json")).get()
        #expect(ticks.count == 1)
        #expect(ticks[0].time == 1_673_859_087_947 && close(ticks[0].change24h, 0.68))
        #expect(ticks[0].volume24h == 243765620.65899866)
    }

    @Test func okxComputesTheChangeFromOpen24h() throws {
        let ticks = try OKXTickers.parse(try exchangeFixture("okx_tickers_spot.json")).get()
        #expect(ticks.count == 1)
        #expect(ticks[0].symbol == "BTC-USDT" && ticks[0].time == 1_597_026_383_085)
        #expect(close(ticks[0].change24h, (9999.99 - 9000) / 9000 * 100) && ticks[0].volume24h == 2222)
    }

    /// Every message of a Coinbase connection carries its sequence number, prices or not.
    @Test func coinbaseFramesCarryTheirSequenceNumber() throws {
        let ticker = CoinbaseTicker.read(try exchangeFixture("coinbase_advanced_trade_ticker.json"))
        #expect(ticker.sequence == 0)
        #expect(exchangeTicks(ticker.frame)?.ticks.count == 1)
        let heartbeat = CoinbaseTicker.read(
            Array(#"{"channel":"heartbeats","timestamp":"2023-06-23T20:31:26Z","sequence_num":42,"events":[]}"#.utf8))
        #expect(heartbeat.sequence == 42 && heartbeat.frame == .control(.heartbeat))
        #expect(CoinbaseTicker.read(Array("not json".utf8)).sequence == nil)
    }
}

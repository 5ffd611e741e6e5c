import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct CoinbaseTests {
    @Test func tickerChannelAsTheTickTableSays() throws {
        let frame = CoinbaseTicker.parse(try exchangeFixture("coinbase_advanced_trade_ticker.json"))
        let (ticks, skipped) = try #require(exchangeTicks(frame))
        #expect(skipped == 0)
        #expect(ticks.count == 1)
        #expect(ticks[0].symbol == "BTC-USD")
        #expect(CoinbaseTicker.commonSymbol(ticks[0].symbol) == "BTC/USD")
        #expect(ticks[0].time == 1675974637167)
        #expect(ticks[0].price == 21932.98)
        #expect(ticks[0].change24h == -4.15775596190603)
        #expect(close(ticks[0].volume24h, 16038.28770938 * 21932.98))
    }

    @Test func entriesWithoutPriceAreSkippedAndCounted() {
        let frame = #"""
            {"channel":"ticker","timestamp":"2023-02-09T20:30:37Z","events":[{"type":"update","tickers":[
              {"product_id":"ETH-USD","price":"1500","volume_24_h":null,"price_percent_chg_24_h":"x"},
              {"product_id":"SOL-USD","volume_24_h":"10"},
              {"product_id":"A\u0000-USD","price":"1"}]}]}
            """#
        #expect(
            CoinbaseTicker.parse(bytes(frame))
                == .ticks([ExchangeTick(symbol: "ETH-USD", time: 1675974637000, price: 1500)], skipped: 2))
        #expect(
            droppedReason(
                CoinbaseTicker.parse(
                    bytes(#"{"channel":"ticker","events":[{"tickers":[{"product_id":"X-USD","price":"1"}]}]}"#)))
                == "Coinbase frame: X-USD: no event time")
    }

    @Test func controlAndUnknownFrames() throws {
        #expect(
            CoinbaseTicker.parse(try exchangeFixture("coinbase_advanced_trade_heartbeats.json")) == .control(.heartbeat)
        )
        #expect(
            CoinbaseTicker.parse(
                bytes(
                    #"{"channel":"subscriptions","events":[{"subscriptions":{"ticker":["BTC-USD"],"heartbeats":["heartbeats"]}}]}"#
                ))
                == .control(.subscribed("ticker,heartbeats")))
        #expect(
            CoinbaseTicker.parse(bytes(#"{"type":"error","message":"failure to subscribe"}"#))
                == .control(.error("failure to subscribe")))
        #expect(
            droppedReason(CoinbaseTicker.parse(try exchangeFixture("coinbase_exchange_legacy_ticker.jsonc")))
                == #"Coinbase frame: no "channel""#)
        #expect(
            droppedReason(CoinbaseTicker.parse(bytes(#"{"channel":"level2","events":[]}"#)))
                == #"Coinbase frame: channel "level2" is not ticker"#)
    }

    @Test func subscribeMessagesHeartbeatsFirstThenBatches() throws {
        let ids = (0..<250).map { "C\($0)-USD" }
        let messages = CoinbaseTicker.subscribeMessages(productIDs: ids)
        #expect(messages.count == 4)
        #expect(messages[0] == CoinbaseTicker.heartbeatsMessage)
        var seen: [String] = []
        for message in messages.dropFirst() {
            let json = try FeedJSON.parse(Array(message.utf8)).get()
            #expect(json["channel"]?.string == "ticker")
            let batch = json["product_ids"]?.array?.compactMap(\.string) ?? []
            #expect(batch.count <= CoinbaseTicker.productsPerMessage)
            seen += batch
        }
        #expect(seen == ids)
        let shape = try FeedJSON.parse(exchangeFixture("coinbase_advanced_trade_subscribe.json")).get()
        #expect(shape["type"]?.string == "subscribe")
    }

    @Test func productsAndCandles() throws {
        #expect(
            try CoinbaseMarkets.parse(exchangeFixture("coinbase_products.json")).get() == [
                ExchangeMarket(exchangeSymbol: "BTC-USD", base: "BTC", quote: "USD", active: true),
                ExchangeMarket(exchangeSymbol: "ETH-EUR", base: "ETH", quote: "EUR", active: false)
            ])
        let page = try CoinbaseCandles.parse(exchangeFixture("coinbase_candles.json"), interval: .minute).get()
        #expect(
            page.candles == [
                Candle(start: 1639508040000, end: 1639508100000, open: 140, high: 140.8, low: 139.9, close: 140.5),
                Candle(start: 1639508100000, end: 1639508160000, open: 140.5, high: 141.5, low: 140.21, close: 141)
            ])
        #expect(CoinbaseCandles.maxCandles == 350)
        #expect(
            CoinbaseCandles.request(productID: "BTC-USD", interval: .hour, start: 1_000_000, end: 2_000_000).url
                == "https://api.coinbase.com/api/v3/brokerage/market/products/BTC-USD/candles?start=1000&end=2000&granularity=ONE_HOUR&limit=350"
        )
        #expect(
            CoinbaseMarkets.parse(bytes(#"{"error":"NOT_FOUND","message":"x"}"#))
                == .failure(FeedPayloadError("Coinbase products: error: x")))
    }
}

import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct KrakenTests {
    @Test func tickerSnapshotAsTheTickTableSays() throws {
        let (ticks, skipped) = try #require(
            exchangeTicks(KrakenTicker.parse(exchangeFixture("kraken_v2_ticker_snapshot.json"))))
        #expect(skipped == 0)
        #expect(ticks.count == 1)
        #expect(ticks[0].symbol == "ALGO/USD")
        #expect(ticks[0].time == 1695632671742)
        #expect(ticks[0].price == 0.10035)
        #expect(ticks[0].change24h == -0.17)
        #expect(close(ticks[0].volume24h, 997038.98383185 * 0.10148))
    }

    @Test func updatesMapXBTAndXDGAndCountSkippedEntries() throws {
        let frame = #"""
            {"channel":"ticker","type":"update","data":[
              {"symbol":"XBT/USD","last":43000.5,"change_pct":1.5,"timestamp":"2023-09-25T09:04:31.742Z"},
              {"symbol":"XDG/EUR","last":0.07,"volume":100,"vwap":null,"timestamp":"2023-09-25T09:04:31Z"},
              {"symbol":"ETH/USD","last":null,"timestamp":"2023-09-25T09:04:31Z"}]}
            """#
        let (ticks, skipped) = try #require(exchangeTicks(KrakenTicker.parse(bytes(frame))))
        #expect(
            ticks == [
                ExchangeTick(symbol: "XBT/USD", time: 1695632671742, price: 43000.5, change24h: 1.5),
                ExchangeTick(symbol: "XDG/EUR", time: 1695632671000, price: 0.07)
            ])
        #expect(skipped == 1)
        #expect(ticks.map { KrakenTicker.commonSymbol($0.symbol) } == ["BTC/USD", "DOGE/EUR"])
        #expect(
            droppedReason(
                KrakenTicker.parse(bytes(#"{"channel":"ticker","type":"update","data":[{"symbol":"ETH/USD"}]}"#)))
                == "Kraken frame: ETH/USD: no usable price")
    }

    @Test func controlFrames() throws {
        #expect(KrakenTicker.parse(try exchangeFixture("kraken_v2_heartbeat.json")) == .control(.heartbeat))
        #expect(
            KrakenTicker.parse(
                bytes(
                    #"{"method":"pong","req_id":101,"time_in":"2023-09-24T14:10:23.799685Z","time_out":"2023-09-24T14:10:23.799703Z"}"#
                ))
                == .control(.pong))
        #expect(
            KrakenTicker.parse(
                bytes(#"{"method":"subscribe","result":{"channel":"ticker","symbol":"ALGO/USD"},"success":true}"#))
                == .control(.subscribed("subscribe ALGO/USD")))
        #expect(
            KrakenTicker.parse(
                bytes(#"{"method":"subscribe","error":"Currency pair not supported FOO/BAR","success":false}"#))
                == .control(.error("Currency pair not supported FOO/BAR")))
        #expect(
            KrakenTicker.parse(bytes(#"{"channel":"status","type":"update","data":[{"system":"online"}]}"#))
                == .control(.notice("status")))
        #expect(
            droppedReason(KrakenTicker.parse(bytes(#"{"channel":"book","data":[]}"#)))
                == #"Kraken frame: channel "book" is not ticker"#)
        #expect(
            droppedReason(KrakenTicker.parse(try exchangeFixture("kraken_v2_ping.json")))
                == #"Kraken frame: method "ping" not expected"#)
    }

    @Test func subscribeAndPingMessages() throws {
        let symbols = (0..<150).map { "S\($0)/USD" }
        let messages = KrakenTicker.subscribeMessages(symbols: symbols)
        #expect(messages.count == 2)
        var seen: [String] = []
        for message in messages {
            let json = try FeedJSON.parse(Array(message.utf8)).get()
            #expect(json["method"]?.string == "subscribe")
            #expect(json["params"]?["channel"]?.string == "ticker")
            seen += json["params"]?["symbol"]?.array?.compactMap(\.string) ?? []
        }
        #expect(seen == symbols)
        #expect(try FeedJSON.parse(Array(KrakenTicker.pingMessage.utf8)).get()["method"]?.string == "ping")
    }

    @Test func assetPairsInCommonCodesAndOHLC() throws {
        #expect(
            try KrakenMarkets.parse(exchangeFixture("kraken_AssetPairs.json")).get() == [
                ExchangeMarket(exchangeSymbol: "XXBTZUSD", base: "BTC", quote: "USD", active: true),
                ExchangeMarket(exchangeSymbol: "XDGEUR", base: "DOGE", quote: "EUR", active: true),
                ExchangeMarket(exchangeSymbol: "XETHXXBT", base: "ETH", quote: "BTC", active: false)
            ])
        #expect(KrakenAssets.common("XXBT") == "BTC")
        #expect(KrakenAssets.common("ZUSD") == "USD")
        #expect(KrakenAssets.common("XTZ") == "XTZ")
        #expect(KrakenAssets.common("ZRX") == "ZRX")
        #expect(
            KrakenMarkets.parse(bytes(#"{"error":["EQuery:Unknown asset pair"]}"#))
                == .failure(FeedPayloadError("Kraken AssetPairs: error: EQuery:Unknown asset pair")))
        let page = try KrakenCandles.parse(exchangeFixture("kraken_OHLC.json"), interval: .minute).get()
        #expect(
            page.candles == [
                Candle(
                    start: 1688671200000, end: 1688671260000, open: 30306.1, high: 30306.2, low: 30305.7, close: 30305.7
                ),
                Candle(
                    start: 1688671260000, end: 1688671320000, open: 30304.5, high: 30304.5, low: 30300, close: 30300.3)
            ])
        #expect(KrakenCandles.maxCandles == 720)
        #expect(
            KrakenCandles.request(pair: "XXBTZUSD", interval: .hour, since: 1_688_671_200_000).url
                == "https://api.kraken.com/0/public/OHLC?pair=XXBTZUSD&interval=60&since=1688671200")
    }
}

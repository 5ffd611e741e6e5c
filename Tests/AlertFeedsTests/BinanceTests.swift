import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct BinanceTests {
    @Test func tickerStreamFrameAsTheTickTableSays() throws {
        let raw = try exchangeFixture("binance_24hrTicker.jsonc")
        let tick = ExchangeTick(symbol: "BNBBTC", time: 1672515782136, price: 0.0025, change24h: 250, volume24h: 18)
        #expect(BinanceTicker.parse(raw) == .ticks([tick], skipped: 0))
        let combined = #"{"stream":"bnbbtc@ticker","data":"# + String(decoding: raw, as: UTF8.self) + "}"
        #expect(BinanceTicker.parse(bytes(combined)) == .ticks([tick], skipped: 0))
    }

    @Test func missingFiguresAreLeftOutAndAMissingPriceDropsTheFrame() {
        #expect(
            BinanceTicker.parse(bytes(#"{"e":"24hrTicker","E":5,"s":"BTCUSDT","c":"7","P":null,"q":"x"}"#))
                == .ticks([ExchangeTick(symbol: "BTCUSDT", time: 5, price: 7)], skipped: 0))
        #expect(
            droppedReason(BinanceTicker.parse(bytes(#"{"e":"24hrTicker","E":5,"s":"BTCUSDT","P":"1"}"#)))
                == "Binance frame: BTCUSDT: no usable price")
        #expect(
            droppedReason(BinanceTicker.parse(bytes(#"{"e":"24hrTicker","E":5,"s":"BTCUSDT","c":"0"}"#)))
                == "Binance frame: BTCUSDT: no usable price")
        #expect(
            droppedReason(BinanceTicker.parse(bytes(#"{"e":"24hrTicker","s":"BTCUSDT","c":"1"}"#)))
                == "Binance frame: BTCUSDT: no event time")
        #expect(
            BinanceTicker.parse(
                bytes(#"[{"e":"24hrTicker","E":5,"s":"A","c":"1"},{"e":"24hrTicker","E":6,"s":"B"},{"e":"trade"}]"#))
                == .ticks([ExchangeTick(symbol: "A", time: 5, price: 1)], skipped: 2))
        #expect(
            droppedReason(BinanceTicker.parse(bytes(#"{"e":"24hrTicker","E":5,"s":"BTC\u0007USDT","c":"1"}"#)))?
                .contains("refused") == true)
        #expect(
            droppedReason(BinanceTicker.parse(bytes(#"{"e":"24hrTicker","E":5,"s":"BTC\u009bUSDT","c":"1"}"#)))?
                .contains("refused") == true)
    }

    @Test func controlAndUnknownFrames() throws {
        #expect(BinanceTicker.parse(bytes(#"{"result":null,"id":1}"#)) == .control(.subscribed("id 1")))
        #expect(
            BinanceTicker.parse(bytes(#"{"code":2,"msg":"Invalid request: unknown\nstream","id":1}"#))
                == .control(.error("Invalid request: unknown?stream")))
        #expect(
            BinanceTicker.parse(bytes(#"{"error":{"code":-1121,"msg":"Invalid symbol."},"id":3}"#))
                == .control(.error("Invalid symbol.")))
        #expect(BinanceTicker.parse(bytes(#"{"e":"serverShutdown","E":1}"#)) == .control(.notice("serverShutdown")))
        #expect(
            droppedReason(BinanceTicker.parse(try exchangeFixture("binance_miniTicker.jsonc")))
                == #"Binance frame: event "24hrMiniTicker" is not 24hrTicker"#)
        #expect(
            droppedReason(BinanceTicker.parse(bytes(#"{"e":"24hrTicker""#)))
                == "Binance frame: not JSON at byte 17 (expected ',' or '}', found end of input)")
        #expect(droppedReason(BinanceTicker.parse(bytes("7"))) == "Binance frame: expected an object, found a number")
        #expect(
            droppedReason(BinanceTicker.parse(bytes(#"{"stream":"x","data":[]}"#)))
                == #"Binance frame: "data" is an array"#)
    }

    @Test func subscribeMessagesStayWithinTheLimits() throws {
        let shape = try exchangeFixture("binance_subscribe.json")
        #expect(isJSONObject(String(decoding: shape, as: UTF8.self)))
        let symbols = (0..<2500).map { "SYM\($0)USDT" }
        let plan = BinanceTicker.subscribeMessages(symbols: symbols)
        #expect(plan.count == 3)
        #expect(plan.map { $0.count } == [6, 6, 3])
        var streams: [String] = []
        for connection in plan {
            var perConnection = 0
            for message in connection {
                guard case .success(let json) = FeedJSON.parse(Array(message.utf8)) else {
                    Issue.record("not JSON"); continue
                }
                #expect(json["method"]?.string == "SUBSCRIBE")
                let params = json["params"]?.array?.compactMap(\.string) ?? []
                #expect(params.count <= BinanceTicker.streamsPerMessage)
                perConnection += params.count
                streams += params
            }
            #expect(perConnection <= BinanceTicker.maxStreamsPerConnection)
        }
        #expect(streams == symbols.map { "\($0.lowercased())@ticker" })
    }

    @Test func exchangeInfoMarketsAndKlines() throws {
        let markets = try BinanceMarkets.parse(exchangeFixture("binance_exchangeInfo.json")).get()
        #expect(
            markets == [
                ExchangeMarket(exchangeSymbol: "ETHBTC", base: "ETH", quote: "BTC", active: true),
                ExchangeMarket(exchangeSymbol: "BTCUSDT", base: "BTC", quote: "USDT", active: true),
                ExchangeMarket(exchangeSymbol: "LUNABTC", base: "LUNA", quote: "BTC", active: false)
            ])
        #expect(markets[1].symbol == "BTC/USDT")
        #expect(
            BinanceMarkets.parse(bytes(#"{"code":-1003,"msg":"Too many requests"}"#))
                == .failure(FeedPayloadError("Binance exchangeInfo: error: Too many requests")))
        let page = try BinanceCandles.parse(exchangeFixture("binance_klines.json"), interval: .day).get()
        #expect(
            page.candles == [
                Candle(
                    start: 1499040000000, end: 1499644800000, open: 0.0163479, high: 0.8, low: 0.015758, close: 0.015771
                ),
                Candle(
                    start: 1499644800000, end: 1500249600000, open: 0.015771, high: 0.016, low: 0.0155, close: 0.0159)
            ])
        #expect(BinanceCandles.maxCandles == 1000)
        #expect(
            BinanceCandles.request(symbol: "BTCUSDT", interval: .hour, start: 1, end: 2).url
                == "https://api.binance.com/api/v3/klines?symbol=BTCUSDT&interval=1h&startTime=1&endTime=2&limit=1000")
    }
}

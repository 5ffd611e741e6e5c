import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct BybitTests {
    @Test func spotTickerAsTheTickTableSays() throws {
        let (ticks, skipped) = try #require(
            exchangeTicks(BybitTicker.parse(exchangeFixture("bybit_v5_spot_ticker.json"))))
        #expect(skipped == 0)
        #expect(ticks.count == 1)
        #expect(ticks[0].symbol == "BTCUSDT")
        #expect(ticks[0].time == 1672305380595)
        #expect(ticks[0].price == 16363.78)
        #expect(close(ticks[0].change24h, -0.49))
        #expect(ticks[0].volume24h == 95949815.680875)
    }

    @Test func deltaLinearAndPricelessFramesAreDropped() throws {
        let linear = try exchangeFixture("bybit_v5_linear_ticker.json")
        // The linear snapshot has the same fields; its `ts` is top-level too, so it parses.
        #expect(exchangeTicks(BybitTicker.parse(linear))?.ticks.first?.price == 17216)
        #expect(
            droppedReason(
                BybitTicker.parse(
                    bytes(
                        #"{"topic":"tickers.BTCUSDT","type":"delta","ts":1,"data":{"symbol":"BTCUSDT","lastPrice":"1"}}"#
                    )))
                == #"Bybit frame: type "delta" is not a spot snapshot"#)
        #expect(
            droppedReason(
                BybitTicker.parse(
                    bytes(
                        #"{"topic":"tickers.BTCUSDT","type":"snapshot","ts":1,"data":{"symbol":"BTCUSDT","price24hPcnt":"0.1"}}"#
                    )))
                == "Bybit frame: BTCUSDT: no usable price")
        #expect(
            BybitTicker.parse(
                bytes(
                    #"{"topic":"tickers.BTCUSDT","ts":1,"data":{"symbol":"BTCUSDT","lastPrice":"2","price24hPcnt":"","turnover24h":null}}"#
                ))
                == .ticks([ExchangeTick(symbol: "BTCUSDT", time: 1, price: 2)], skipped: 0))
        #expect(
            droppedReason(BybitTicker.parse(bytes(#"{"topic":"orderbook.50.BTCUSDT","data":{}}"#)))
                == #"Bybit frame: topic "orderbook.50.BTCUSDT" is not tickers"#)
    }

    @Test func controlFrames() throws {
        #expect(
            BybitTicker.parse(bytes(#"{"success":true,"ret_msg":"pong","conn_id":"0970e817","req_id":"","op":"ping"}"#))
                == .control(.pong))
        #expect(
            BybitTicker.parse(bytes(#"{"req_id":"1","op":"pong","args":["1675418560633"],"conn_id":"x"}"#))
                == .control(.pong))
        #expect(
            BybitTicker.parse(
                bytes(#"{"success":true,"ret_msg":"subscribe","conn_id":"x","req_id":"test","op":"subscribe"}"#))
                == .control(.subscribed("test")))
        #expect(
            BybitTicker.parse(
                bytes(
                    #"{"success":false,"ret_msg":"error:handler not found,topic:tickers.FOO","conn_id":"x","op":"subscribe"}"#
                ))
                == .control(.error("error:handler not found,topic:tickers.FOO")))
        #expect(
            droppedReason(BybitTicker.parse(try exchangeFixture("bybit_v5_ping.json")))
                == #"Bybit frame: op "ping" not expected"#)
    }

    @Test func subscribeBatchesOfTenArgsAndPing() throws {
        let symbols = (0..<25).map { "S\($0)USDT" }
        let messages = BybitTicker.subscribeMessages(symbols: symbols)
        #expect(messages.count == 3)
        var seen: [String] = []
        for message in messages {
            let json = try FeedJSON.parse(Array(message.utf8)).get()
            let args = json["args"]?.array?.compactMap(\.string) ?? []
            #expect(args.count <= BybitTicker.argsPerMessage)
            seen += args
        }
        #expect(seen == symbols.map { "tickers.\($0)" })
        let shape = try FeedJSON.parse(exchangeFixture("bybit_v5_subscribe.json")).get()
        #expect(shape["op"]?.string == "subscribe")
        #expect(BybitTicker.pingMessage == #"{"op":"ping"}"#)
    }

    @Test func instrumentsAndKlines() throws {
        #expect(
            try BybitMarkets.parse(exchangeFixture("bybit_instruments_spot.json")).get() == [
                ExchangeMarket(exchangeSymbol: "BTCUSDT", base: "BTC", quote: "USDT", active: true),
                ExchangeMarket(exchangeSymbol: "OLDUSDC", base: "OLD", quote: "USDC", active: false)
            ])
        #expect(
            BybitMarkets.parse(bytes(#"{"retCode":10001,"retMsg":"params error","result":{}}"#))
                == .failure(FeedPayloadError("Bybit instruments-info: error 10001: params error")))
        let page = try BybitCandles.parse(exchangeFixture("bybit_kline.json"), interval: .hour).get()
        #expect(
            page.candles == [
                Candle(
                    start: 1670605200000, end: 1670608800000, open: 17071.5, high: 17071.5, low: 17061, close: 17071),
                Candle(start: 1670608800000, end: 1670612400000, open: 17071, high: 17073, low: 17027, close: 17055.5)
            ])
        #expect(BybitCandles.maxCandles == 1000)
    }
}

import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct OKXTests {
    @Test func tickersAsTheTickTableSays() throws {
        let (ticks, skipped) = try #require(
            exchangeTicks(OKXTicker.parse(exchangeFixture("okx_v5_tickers_captured_spot.json"))))
        #expect(skipped == 0)
        #expect(ticks.count == 1)
        #expect(ticks[0].symbol == "BTC-USDT")
        #expect(OKXTicker.commonSymbol(ticks[0].symbol) == "BTC/USDT")
        #expect(ticks[0].time == 1656324000453)
        #expect(ticks[0].price == 21454)
        #expect(close(ticks[0].change24h, (21454 - 21418.3) / 21418.3 * 100))
        #expect(ticks[0].volume24h == 21708329174.25886254)
        let doc = try #require(exchangeTicks(OKXTicker.parse(exchangeFixture("okx_v5_tickers_docs_example.json"))))
        #expect(close(doc.ticks.first?.change24h, (9999.99 - 9000) / 9000 * 100))
    }

    @Test func nonSpotZeroOpenAndPricelessEntries() throws {
        #expect(
            droppedReason(OKXTicker.parse(try exchangeFixture("okx_v5_tickers_captured_swap.json")))
                == "OKX frame: instType SWAP is not SPOT")
        let frame = #"""
            {"arg":{"channel":"tickers","instId":"X-USDT"},"data":[
              {"instType":"SPOT","instId":"A-USDT","last":"2","open24h":"0","volCcy24h":"abc","ts":"7"},
              {"instType":"SPOT","instId":"B-USDT","open24h":"1","ts":"7"}]}
            """#
        #expect(
            OKXTicker.parse(bytes(frame)) == .ticks([ExchangeTick(symbol: "A-USDT", time: 7, price: 2)], skipped: 1))
    }

    @Test func controlFrames() {
        #expect(OKXTicker.parse(bytes("pong")) == .control(.pong))
        #expect(
            OKXTicker.parse(
                bytes(#"{"event":"subscribe","arg":{"channel":"tickers","instId":"BTC-USDT"},"connId":"a4d3ae55"}"#))
                == .control(.subscribed("tickers BTC-USDT")))
        #expect(
            OKXTicker.parse(
                bytes(
                    #"{"event":"error","code":"60012","msg":"Invalid request: {\"op\": \"subscribe\"}","connId":"a4d3ae55"}"#
                ))
                == .control(.error(#"60012: Invalid request: {"op": "subscribe"}"#)))
        #expect(
            OKXTicker.parse(
                bytes(
                    #"{"event":"notice","code":"64008","msg":"The connection will soon be closed for a service upgrade."}"#
                ))
                == .control(.notice("notice")))
        #expect(droppedReason(OKXTicker.parse(bytes("ping")))?.hasPrefix("OKX frame: not JSON at byte 0") == true)
        #expect(
            droppedReason(OKXTicker.parse(bytes(#"{"arg":{"channel":"books"},"data":[]}"#)))
                == #"OKX frame: channel "books" is not tickers"#)
    }

    @Test func subscribeMessagesStayUnder64KB() throws {
        let ids = (0..<3000).map { "COIN\($0)-USDT" }
        let messages = OKXTicker.subscribeMessages(instIDs: ids)
        #expect(messages.count > 1)
        var seen: [String] = []
        for message in messages {
            #expect(message.utf8.count <= OKXTicker.maxMessageBytes)
            let json = try FeedJSON.parse(Array(message.utf8)).get()
            #expect(json["op"]?.string == "subscribe")
            seen += json["args"]?.array?.compactMap { $0["instId"]?.string } ?? []
        }
        #expect(seen == ids)
        let shape = try FeedJSON.parse(exchangeFixture("okx_v5_subscribe.json")).get()
        #expect(shape["args"]?.array?.first?["channel"]?.string == "tickers")
        #expect(OKXTicker.pingMessage == "ping")
    }

    @Test func instrumentsAndCandles() throws {
        #expect(
            try OKXMarkets.parse(exchangeFixture("okx_instruments_spot.json")).get() == [
                ExchangeMarket(exchangeSymbol: "BTC-USDT", base: "BTC", quote: "USDT", active: true),
                ExchangeMarket(exchangeSymbol: "OLD-USDT", base: "OLD", quote: "USDT", active: false)
            ])
        #expect(
            OKXMarkets.parse(bytes(#"{"code":"51001","msg":"Instrument ID does not exist","data":[]}"#))
                == .failure(FeedPayloadError("OKX instruments: error 51001: Instrument ID does not exist")))
        let page = try OKXCandles.parse(exchangeFixture("okx_candles.json"), interval: .minute).get()
        #expect(
            page.candles == [
                Candle(start: 1597026323085, end: 1597026383085, open: 3.731, high: 3.799, low: 3.494, close: 3.72),
                Candle(start: 1597026383085, end: 1597026443085, open: 3.721, high: 3.743, low: 3.677, close: 3.708)
            ])
        #expect((OKXCandles.maxCandles, OKXCandles.recentDepth, OKXCandles.maxHistoryCandles) == (300, 1_440, 100))
        #expect(
            OKXCandles.request(instID: "BTC-USDT", interval: .hour, olderThan: 5, history: true).url
                == "https://www.okx.com/api/v5/market/history-candles?instId=BTC-USDT&bar=1H&after=5&limit=100")
    }
}

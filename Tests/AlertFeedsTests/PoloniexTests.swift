import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct PoloniexTests {
    let t0: Int64 = 1_700_000_000_000

    @Test func recordedAndSyntheticTickerFrames() throws {
        let lines = try fixtureLines("poloniex_v3_ws_ticker_samples.jsonl")
        #expect(lines.count == 2)
        #expect(
            PoloniexTicker.parse(lines[0], receivedAt: t0)
                == .ticks([Tick(time: 1694469187081, symbol: "BTC_USDC", price: 25153.02, change24h: -0.0276 * 100)]))
        #expect(
            PoloniexTicker.parse(lines[1], receivedAt: t0)
                == .ticks([Tick(time: 1648052794867, symbol: "ETH_USDT", price: 204, change24h: 0.9428 * 100)]))
    }

    @Test func entryEdgeCases() throws {
        let frame = #"""
            {"channel":"ticker","data":[
              {"symbol":"a_usdt","close":1.5,"dailyChange":0.01,"ts":"1694469187081"},
              {"symbol":"B_USDT","close":"6.3e-9","dailyChange":null},
              {"symbol":"C_USDT","close":"1.0E-5","dailyChange":"x","ts":null},
              {"symbol":"NULL_USDT","close":null,"dailyChange":"0.1","ts":1},
              {"symbol":"ZERO_USDT","close":"0","ts":1},
              {"symbol":"NEG_USDT","close":"-2","ts":1},
              {"close":"2","ts":1},
              {"symbol":42,"close":"2","ts":1},
              {"symbol":"NOCLOSE_USDT"},
              "not an object"
            ]}
            """#
        let parsed = PoloniexTicker.parseCounting(bytes(frame), receivedAt: t0)
        #expect(
            parsed.frame
                == .ticks([
                    Tick(time: 1694469187081, symbol: "A_USDT", price: 1.5, change24h: 0.01 * 100),
                    Tick(time: t0, symbol: "B_USDT", price: 6.3e-9),
                    Tick(time: t0, symbol: "C_USDT", price: 1.0e-5)
                ]))
        #expect(parsed.skipped == 7)
    }

    @Test func controlAndInvalidFrames() throws {
        for text in [
            #"{"event":"pong"}"#, #"{"event":"subscribe","channel":"ticker","symbols":["all"]}"#,
            #"{"event":"error","message":"Subscription failed"}"#,
            #"{"channel":"book","data":[{"symbol":"BTC_USDT"}]}"#
        ] {
            #expect(PoloniexTicker.parse(bytes(text), receivedAt: t0) == .control, "\(text)")
        }
        #expect(
            ControlFrame.errorMessage(in: bytes(#"{"event":"error","message":"Subscription failed"}"#))
                == "Subscription failed")
        let cases: [(String, String)] = [
            ("", "Poloniex ticker frame: not JSON at byte 0 (expected '{', found end of input)"),
            ("pong", "Poloniex ticker frame: not JSON at byte 0 (expected '{')"),
            (#"{"channel":"ticker"}"#, #"Poloniex ticker frame: no "data""#),
            (#"{"channel":"ticker","data":{}}"#, #"Poloniex ticker frame: "data" is an object"#),
            (#"{"data":[]}"#, #"Poloniex ticker frame: no "channel" and no "event""#),
            (
                #"{"channel":"ticker","data":[{"symbol":"X","close":"1"}"#,
                "Poloniex ticker frame: not JSON at byte 54 (expected ',' or ']', found end of input)"
            )
        ]
        for (text, reason) in cases {
            #expect(PoloniexTicker.parse(bytes(text), receivedAt: t0) == .invalid(reason), "\(text)")
        }
        #expect(PoloniexTicker.parse(bytes(#"{"channel":"ticker","data":[]}"#), receivedAt: t0) == .ticks([]))
    }

    @Test func truncationsAndNoise() throws {
        let frame = try fixtureLines("poloniex_v3_ws_ticker_samples.jsonl")[0]
        for n in 0..<frame.count {
            #expect(invalidReason(PoloniexTicker.parse(Array(frame.prefix(n)), receivedAt: t0)) != nil)
        }
        for _ in 0..<2000 {
            var noisy = frame
            noisy[Int.random(in: 0..<noisy.count)] = UInt8.random(in: 0...255)
            _ = PoloniexTicker.parse(noisy, receivedAt: t0)
        }
    }

    @Test func messages() throws {
        #expect(PoloniexTicker.subscribeMessage == #"{"event":"subscribe","channel":["ticker"],"symbols":["all"]}"#)
        #expect(PoloniexTicker.pingMessage == #"{"event":"ping"}"#)
    }

    @Test func restTicker24hSingleAndArray() throws {
        let body = try fixtureBytes("poloniex_v3_rest_ticker24h_BTC_USDT.json")
        let expected = Tick(time: 1720116658703, symbol: "BTC_USDT", price: 58017.58, change24h: -0.0392 * 100)
        #expect(PoloniexTicker24h.parse(body, receivedAt: t0) == .ticks([expected]))
        let array = bytes("[" + String(decoding: body, as: UTF8.self) + #",{"symbol":"X_USDT","close":null}]"#)
        let parsed = PoloniexTicker24h.parseCounting(array, receivedAt: t0)
        #expect(parsed == ParsedFrame(.ticks([expected]), skipped: 1))
        #expect(PoloniexTicker24h.parse(bytes("[]"), receivedAt: t0) == .ticks([]))
        #expect(
            PoloniexTicker24h.parse(bytes("42"), receivedAt: t0)
                == .invalid("Poloniex ticker24h: not JSON at byte 0 (expected '{' or '[')"))
        #expect(invalidReason(PoloniexTicker24h.parse(Array(body.prefix(100)), receivedAt: t0)) != nil)
    }

    @Test func marketList() throws {
        let body = #"""
            [{"symbol":"BTC_USDT","baseCurrencyName":"BTC","quoteCurrencyName":"USDT","displayName":"BTC/USDT","state":"NORMAL",
              "visibleStartTime":1659018819512,"tradableStartTime":1659018819512,
              "symbolTradeLimit":{"symbol":"BTC_USDT","priceScale":2,"minQuantity":"0.000001","minAmount":"1"},
              "crossMargin":{"supportCrossMargin":true,"maxLeverage":"3"}},
             {"symbol":"OLD_USDT","baseCurrencyName":"OLD","quoteCurrencyName":"USDT","displayName":"OLD/USDT","state":"PAUSE"},
             {"symbol":null}, {"baseCurrencyName":"X"}, 7]
            """#
        #expect(
            try PoloniexMarkets.parse(bytes(body)).get() == [
                Market(symbol: "BTC_USDT", name: "BTC/USDT", base: "BTC", quote: "USDT", future: false, active: true),
                Market(symbol: "OLD_USDT", name: "OLD/USDT", base: "OLD", quote: "USDT", future: false, active: false)
            ])
        #expect(
            PoloniexMarkets.parse(bytes(#"{"code":500}"#))
                == .failure(FeedPayloadError("Poloniex markets: expected an array, found an object")))
        #expect(
            PoloniexMarkets.parse(bytes("[{"))
                == .failure(
                    FeedPayloadError("Poloniex markets: not JSON at byte 2 (expected '\"', found end of input)")))
    }
}

import AlertModel
import Foundation
import JSONTokens
import Testing

@testable import AlertFeeds

@Suite struct BTSECoinIndexTests {
    let t0: Int64 = 1_700_000_000_000

    @Test func readmeSnippetIsRejected() throws {
        let snippet = try fixtureBytes("btse_coinIndex_README_snippet.txt")
        let reason = try #require(invalidReason(BTSECoinIndex.parse(snippet, receivedAt: t0)))
        // `"type: 1,` opens a string that runs into the line break.
        #expect(
            reason
                == "coinIndex frame: not JSON at byte \(offsetOfLineBreak(after: "\"type: 1,", in: snippet)) (control character in string)"
        )
    }

    func offsetOfLineBreak(after marker: String, in bytes: [UInt8]) -> Int {
        let text = String(decoding: bytes, as: UTF8.self)
        let range = text.range(of: marker)!
        return text.utf8.distance(from: text.startIndex, to: range.upperBound)
    }

    @Test func readmeSnippetWithTheQuoteRestored() throws {
        let text = String(decoding: try fixtureBytes("btse_coinIndex_README_snippet.txt"), as: UTF8.self)
            .replacingOccurrences(of: "\"type: 1", with: "\"type\": 1")
        #expect(
            BTSECoinIndex.parse(bytes(text), receivedAt: t0) == .ticks([Tick(time: t0, symbol: "ANT", price: 3.273782)])
        )
    }

    @Test func numbersStringsNullsExponentsAndSymbols() throws {
        let frame = #"""
            {"topic":"coinIndex","id":null,"data":{
              "BTC_1":{"id":"BTC","name":"BTC","type":1,"price":43210.5},
              "ETH_1":{"price":"2345.67","type":1},
              "NUL_1":{"price":null},
              "MISS_1":{"id":"MISS"},
              "NEG_1":{"price":-1},
              "ZERO_1":{"price":0},
              "WORD_1":{"price":"abc"},
              "BOOL_1":{"price":true},
              "TINY_1":{"price":6.3e-9},
              "TINS_1":{"price":"1.0E-5"},
              "doge_1":{"price":0.07},
              "USDT":{"price":1.0001},
              "A_B_12":{"price":2},
              "_1":{"price":3},
              "NOTOBJ_1":42
            }}
            """#
        let parsed = BTSECoinIndex.parseCounting(bytes(frame), receivedAt: t0)
        #expect(
            parsed.frame
                == .ticks([
                    Tick(time: t0, symbol: "BTC", price: 43210.5),
                    Tick(time: t0, symbol: "ETH", price: 2345.67),
                    Tick(time: t0, symbol: "TINY", price: 6.3e-9),
                    Tick(time: t0, symbol: "TINS", price: 1.0e-5),
                    Tick(time: t0, symbol: "DOGE", price: 0.07),
                    Tick(time: t0, symbol: "USDT", price: 1.0001),
                    Tick(time: t0, symbol: "A_B", price: 2),
                    Tick(time: t0, symbol: "_1", price: 3)
                ]))
        #expect(parsed.skipped == 7)
    }

    @Test func suffixRule() throws {
        func strip(_ key: String) -> String {
            let b = Array(key.utf8)
            return b.withUnsafeBufferPointer { p in
                String(decoding: p[JSONTokenizer.withoutIndexSuffix(0..<b.count, in: p)], as: UTF8.self)
            }
        }
        #expect(strip("BTC_1") == "BTC")
        #expect(strip("BTC_10") == "BTC")
        #expect(strip("BTC") == "BTC")
        #expect(strip("BTC_") == "BTC_")
        #expect(strip("BTC_X") == "BTC_X")
        #expect(strip("1INCH_1") == "1INCH")
        #expect(strip("_1") == "_1")
    }

    @Test func controlFrames() throws {
        for text in [
            "connect success", "pong", " PONG\n", "Connect Success",
            #"{"event":"subscribe","channel":["coinIndex"]}"#,
            #"{"event":"login","success":true}"#,
            #"{"event":"error","message":"topic not found"}"#,
            #"{"topic":"somethingElse","data":[1,2]}"#
        ] {
            #expect(BTSECoinIndex.parse(bytes(text), receivedAt: t0) == .control, "\(text)")
        }
        #expect(
            ControlFrame.errorMessage(in: bytes(#"{"event":"error","message":"topic not found"}"#)) == "topic not found"
        )
        #expect(ControlFrame.errorMessage(in: bytes(#"{"event":"subscribe","channel":["coinIndex"]}"#)) == nil)
        #expect(ControlFrame.errorMessage(in: bytes(#"{"event":"error"}"#)) == #"{"event":"error"}"#)
        for line in try fixtureLines("btse_ws_tradeHistoryApi_samples.jsonl") {
            #expect(BTSECoinIndex.parse(line, receivedAt: t0) == .control)
        }
    }

    @Test func invalidFrames() throws {
        let cases: [(String, String)] = [
            ("", "coinIndex frame: empty"),
            ("hello", "coinIndex frame: not JSON at byte 0 (hello)"),
            ("{}", #"coinIndex frame: no "topic" and no "event""#),
            (#"{"topic":"coinIndex"}"#, #"coinIndex frame: no "data""#),
            (#"{"topic":"coinIndex","data":[]}"#, #"coinIndex frame: "data" is an array"#),
            (#"{"topic":"coinIndex","data":null}"#, #"coinIndex frame: "data" is null"#),
            (
                #"{"topic":"coinIndex","data":{}} x"#,
                "coinIndex frame: not JSON at byte 32 (unexpected text after the object)"
            ),
            (
                #"{"topic":"coinIndex","data":{"BTC_1":{"price":1}"#,
                "coinIndex frame: not JSON at byte 48 (expected ',' or '}', found end of input)"
            ),
            (
                #"{"topic":"coinIndex","data":{"BTC_1":{"price":01}}}"#,
                "coinIndex frame: not JSON at byte 47 (expected ',' or '}')"
            )
        ]
        for (text, reason) in cases {
            #expect(BTSECoinIndex.parse(bytes(text), receivedAt: t0) == .invalid(reason), "\(text)")
        }
        #expect(BTSECoinIndex.parse(bytes(#"{"topic":"coinIndex","data":{}}"#), receivedAt: t0) == .ticks([]))
    }

    @Test func everyTruncationIsInvalidAndNothingCrashes() throws {
        let frame = bytes(
            #"{"topic":"coinIndex","id":null,"data":{"BTC_1":{"id":"BTC","price":"43210.5"},"ETH_1":{"price":2e3}}}"#)
        #expect(ticks(BTSECoinIndex.parse(frame, receivedAt: t0))?.count == 2)
        for n in 1..<frame.count {
            #expect(invalidReason(BTSECoinIndex.parse(Array(frame.prefix(n)), receivedAt: t0)) != nil, "prefix \(n)")
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var noisy = frame
            noisy[Int.random(in: 0..<noisy.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            _ = BTSECoinIndex.parse(noisy, receivedAt: t0)
            _ = BTSECoinIndex.parse((0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) }, receivedAt: t0)
        }
    }

    @Test func hugeFrame() throws {
        var text = #"{"topic":"coinIndex","id":null,"data":{"#
        text += (0..<20_000).map { #""C\#($0)_1":{"id":"C\#($0)","name":"C\#($0)","type":1,"price":\#($0 + 1).25}"# }
            .joined(separator: ",")
        text += "}}"
        let result = ticks(BTSECoinIndex.parse(bytes(text), receivedAt: t0))
        #expect(result?.count == 20_000)
        #expect(result?.last == Tick(time: t0, symbol: "C19999", price: 20000.25))
        let deep = String(repeating: "[", count: 100_000)
        #expect(invalidReason(BTSECoinIndex.parse(bytes(#"{"topic":"coinIndex","x":"# + deep), receivedAt: t0)) != nil)
    }

    /// BTSE's `SYMBOL_1` joins the market list's `symbol` (the base, `BTC`), not `marketName`.
    @Test func indexSymbolsJoinTheRecordedMarketList() throws {
        let markets = MarketList(
            try BTSEMarketList.load(path: fixturesFolder + "/btse_futures_inquire_initial_market.json"))
        let frame = bytes(#"{"topic":"coinIndex","data":{"BTC_1":{"price":29000},"ETH_1":{"price":1800}}}"#)
        for tick in try #require(ticks(BTSECoinIndex.parse(frame, receivedAt: t0))) {
            #expect(!markets.entries(for: tick.symbol).isEmpty, "\(tick.symbol)")
        }
    }
}

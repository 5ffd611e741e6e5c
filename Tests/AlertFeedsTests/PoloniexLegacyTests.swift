import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct PoloniexLegacyTests {
    let t0: Int64 = 1_700_000_000_000

    func referencePairs() throws -> [Int: String] {
        try PoloniexLegacyTicker.pairIDs(try fixtureBytes("poloniex_legacy_currency_pair_ids.json")).get()
    }

    @Test func returnTickerFixture() throws {
        let table = try PoloniexLegacyTicker.parse(
            try fixtureBytes("poloniex_legacy_returnTicker.json"), receivedAt: t0
        ).get()
        #expect(table.markets.count == 117)
        #expect(table.pairs.count == 117)
        #expect(table.ticks.count + table.skipped == 117)
        #expect(
            table.markets.first
                == Market(symbol: "BTC_ARDR", name: "ARDR/BTC", base: "ARDR", quote: "BTC", future: false, active: true)
        )
        #expect(
            table.ticks.first == Tick(time: t0, symbol: "BTC_ARDR", price: 0.00001248, change24h: -0.01732283 * 100))
        #expect(table.pairs[177] == "BTC_ARDR")
        let reference = try referencePairs()
        #expect(reference.count == 128)
        for (id, pair) in table.pairs {
            #expect(reference[id] == pair, "id \(id)")
        }
    }

    @Test func returnTickerEdgeCases() throws {
        let body = #"""
            {"USDT_BTC":{"id":121,"last":"7000.5","percentChange":"0.0445","isFrozen":"0"},
             "BTC_NUL":{"id":1,"last":null,"percentChange":"0","isFrozen":"1"},
             "BTC_EXP":{"id":2,"last":"1.0E-5","percentChange":null},
             "BTC_NUM":{"id":3,"last":0.5,"percentChange":-0.5},
             "ODD":{"id":4,"last":"1"},
             "BTC_BAD":"x"}
            """#
        let table = try PoloniexLegacyTicker.parse(bytes(body), receivedAt: t0).get()
        #expect(
            table.ticks == [
                Tick(time: t0, symbol: "USDT_BTC", price: 7000.5, change24h: 0.0445 * 100),
                Tick(time: t0, symbol: "BTC_EXP", price: 1.0e-5),
                Tick(time: t0, symbol: "BTC_NUM", price: 0.5, change24h: -50),
                Tick(time: t0, symbol: "ODD", price: 1)
            ])
        #expect(table.skipped == 2)
        #expect(table.markets.map(\.active) == [true, false, true, true, true])
        #expect(
            table.markets[4] == Market(symbol: "ODD", name: "ODD", base: "", quote: "", future: false, active: true))
        #expect(table.pairs == [121: "USDT_BTC", 1: "BTC_NUL", 2: "BTC_EXP", 3: "BTC_NUM", 4: "ODD"])
        #expect(
            PoloniexLegacyTicker.parse(bytes(#"{"error":"Invalid command."}"#), receivedAt: t0)
                == .failure(FeedPayloadError("Poloniex returnTicker: error: Invalid command.")))
        #expect(
            PoloniexLegacyTicker.parse(bytes("[]"), receivedAt: t0)
                == .failure(FeedPayloadError("Poloniex returnTicker: expected an object, found an array")))
    }

    @Test func websocketSamples() throws {
        let pairs = try referencePairs()
        let lines = try fixtureLines("poloniex_legacy_ws_samples.jsonl")
        let frames = lines.map { PoloniexLegacyFrame.parse($0, receivedAt: t0, pairs: pairs) }
        #expect(
            frames == [
                .control,
                .ticks([Tick(time: t0, symbol: "USDT_ETH", price: 219.42870877, change24h: 0.01830508 * 100)]),
                .ticks([Tick(time: t0, symbol: "BTC_SC", price: 0.00000098, change24h: 0.01030927 * 100)]),
                .ticks([Tick(time: t0, symbol: "BTC_DCR", price: 0.00627869, change24h: 0.01665689 * 100)]),
                .ticks([Tick(time: t0, symbol: "USDT_ETH", price: 382.98901522, change24h: -0.04312950 * 100)]),
                .control,
                .control
            ])
    }

    @Test func websocketEdgeCases() throws {
        let pairs = [149: "USDT_ETH"]
        func parse(_ text: String) -> FeedFrame { PoloniexLegacyFrame.parse(bytes(text), receivedAt: t0, pairs: pairs) }
        #expect(parse(#"[1002,null,[999,"1","1","1","0.1"]]"#) == .invalid("unknown pair id 999"))
        #expect(parse(#"[1002,null,[149,null,"1","1","0.1"]]"#) == .ticks([]))
        #expect(
            PoloniexLegacyFrame.parseCounting(
                bytes(#"[1002,null,[149,"0","1","1","0.1"]]"#), receivedAt: t0, pairs: pairs
            ).skipped == 1)
        #expect(
            parse(#"[1002,null,[149,"6.3e-9","1","1",null]]"#)
                == .ticks([Tick(time: t0, symbol: "USDT_ETH", price: 6.3e-9)]))
        #expect(
            parse(#"[1002,null,[149,2.5,"1","1",-0.5]]"#)
                == .ticks([Tick(time: t0, symbol: "USDT_ETH", price: 2.5, change24h: -50)]))
        #expect(parse("[1002,0]") == .control)
        #expect(parse("[1001,null,[]]") == .control)
        #expect(parse(#"[1002,null,"x"]"#) == .invalid("Poloniex legacy frame: ticker row is a string"))
        #expect(
            parse(#"[1002,null,[149,"1"]]"#) == .invalid("Poloniex legacy frame: ticker row needs an id and 4 values"))
        #expect(
            parse(#"[1002,null,["149","1","1","1","0"]]"#)
                == .ticks([Tick(time: t0, symbol: "USDT_ETH", price: 1, change24h: 0)]))
        #expect(
            parse(#"{"error":"x"}"#)
                == .invalid("Poloniex legacy frame: expected an array starting with a channel number"))
        #expect(parse("[]") == .invalid("Poloniex legacy frame: expected an array starting with a channel number"))
        #expect(
            parse("[1002,null,[149")
                == .invalid("Poloniex legacy frame: not JSON at byte 15 (expected ',' or ']', found end of input)"))
        #expect(
            parse("")
                == .invalid("Poloniex legacy frame: not JSON at byte 0 (expected a JSON value, found end of input)"))
        #expect(PoloniexLegacyFrame.subscribeMessage == #"{"command":"subscribe","channel":1002}"#)
    }

    @Test func truncatedAndNoisyBodiesNeverCrash() throws {
        let body = try fixtureBytes("poloniex_legacy_returnTicker.json")
        for n in stride(from: 0, to: body.count, by: 97) {
            #expect((try? PoloniexLegacyTicker.parse(Array(body.prefix(n)), receivedAt: t0).get()) == nil)
        }
        let frame = bytes(
            #"[1002,null,[149,"219.42870877","219.85995997","219.00000016","0.01830508","1","2",0,"3","4"]]"#)
        for _ in 0..<2000 {
            var noisy = frame
            noisy[Int.random(in: 0..<noisy.count)] = UInt8.random(in: 0...255)
            _ = PoloniexLegacyFrame.parse(noisy, receivedAt: t0, pairs: [149: "USDT_ETH"])
        }
    }

    @Test func baseAndQuote() throws {
        #expect(PoloniexLegacyTicker.baseAndQuote("BTC_ARDR") == ("ARDR", "BTC"))
        #expect(PoloniexLegacyTicker.baseAndQuote("USDT_BTC") == ("BTC", "USDT"))
        #expect(PoloniexLegacyTicker.baseAndQuote("A_B_C") == ("", ""))
        #expect(PoloniexLegacyTicker.baseAndQuote("_B") == ("", ""))
    }
}

import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct CoinRankingTests {
    let t0: Int64 = 1_700_000_000_000
    let expected = [
        Tick(time: 1_700_000_000_000, symbol: "CHIK", price: 0.000346974415256314),
        Tick(time: 1_700_000_000_000, symbol: "SOLMON", price: 0.000005445843480571)
    ]

    @Test func bareArrayFixtureSkipsTheNullPrice() throws {
        let body = try fixtureBytes("coinranking_v2_coins_items_with_nulls.json")
        #expect(CoinRankingCoins.ticksCounting(body, receivedAt: t0) == ParsedFrame(.ticks(expected), skipped: 1))
        #expect(
            try CoinRankingCoins.markets(body).get() == [
                Market(symbol: "CHIK", name: "CHIK", base: "CHIK", quote: "USD", future: false, active: true),
                Market(symbol: "SOLMON", name: "Solamon", base: "SOLMON", quote: "USD", future: false, active: true),
                Market(
                    symbol: "TRUMP", name: "TRUMP MAGA SUPER", base: "TRUMP", quote: "USD", future: false, active: true)
            ])
    }

    @Test func fullResponse() throws {
        let coins = String(decoding: try fixtureBytes("coinranking_v2_coins_items_with_nulls.json"), as: UTF8.self)
        let body = #"{"status":"success","data":{"stats":{"total":3,"totalMarketCap":null},"coins":"# + coins + "}}"
        #expect(CoinRankingCoins.ticks(bytes(body), receivedAt: t0) == .ticks(expected))
        let withChange =
            #"{"status":"success","data":{"coins":[{"symbol":"btc","price":"65955.43","change":"-0.61"},{"symbol":"x","price":"1e2","change":5}]}}"#
        #expect(
            CoinRankingCoins.ticks(bytes(withChange), receivedAt: t0)
                == .ticks([
                    Tick(time: t0, symbol: "BTC", price: 65955.43, change24h: -0.61),
                    Tick(time: t0, symbol: "X", price: 100, change24h: 5)
                ]))
    }

    @Test func failuresAndGarbage() throws {
        #expect(
            CoinRankingCoins.ticks(
                bytes(#"{"status":"fail","type":"RATE_LIMIT_EXCEEDED","message":"Too many requests"}"#), receivedAt: t0)
                == .invalid("Coinranking coins: status fail: Too many requests"))
        #expect(
            CoinRankingCoins.ticks(bytes(#"{"status":"success","data":{"coins":{}}}"#), receivedAt: t0)
                == .invalid(#"Coinranking coins: no "data.coins" array"#))
        #expect(
            CoinRankingCoins.ticks(bytes(#""success""#), receivedAt: t0)
                == .invalid("Coinranking coins: expected an object or an array, found a string"))
        #expect(
            invalidReason(
                CoinRankingCoins.ticks(bytes(#"{"status":"success","data":{"coins":[{"symbol":"#), receivedAt: t0))
                != nil)
        #expect(CoinRankingCoins.ticks(bytes("[]"), receivedAt: t0) == .ticks([]))
    }
}

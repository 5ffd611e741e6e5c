import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct CoinGeckoTests {
    let t0: Int64 = 1_700_000_000_000

    @Test func specExample() throws {
        let body = try fixtureBytes("coingecko_coins_markets_oas_example.json")
        let time = try #require(Timestamp.parse(Array("2026-05-18T12:49:21.599Z".utf8)))
        #expect(
            CoinGeckoMarkets.ticks(body, receivedAt: t0)
                == .ticks([Tick(time: time, symbol: "BTC", price: 77671, change24h: -0.95302)]))
        #expect(
            try CoinGeckoMarkets.markets(body).get() == [
                Market(symbol: "BTC", name: "Bitcoin", base: "BTC", quote: "USD", future: false, active: true)
            ])
        #expect(try CoinGeckoMarkets.markets(body, vsCurrency: "eur").get().first?.quote == "EUR")
    }

    @Test func nullsStringsExponentsAndMissingFields() throws {
        let body = #"""
            [{"symbol":"eth","name":"Ethereum","current_price":"2345.5","price_change_percentage_24h":"1.5","last_updated":"2024-01-01T00:00:00Z"},
             {"symbol":"new","current_price":null,"price_change_percentage_24h":null},
             {"symbol":"tiny","current_price":1.0E-5,"price_change_percentage_24h":null,"last_updated":null},
             {"symbol":"bad","current_price":2,"last_updated":"yesterday","price_change_percentage_24h":"n/a"},
             {"current_price":2},
             {"symbol":"zero","current_price":0},
             []]
            """#
        let parsed = CoinGeckoMarkets.ticksCounting(bytes(body), receivedAt: t0)
        #expect(
            parsed.frame
                == .ticks([
                    Tick(time: 1_704_067_200_000, symbol: "ETH", price: 2345.5, change24h: 1.5),
                    Tick(time: t0, symbol: "TINY", price: 1.0e-5),
                    Tick(time: t0, symbol: "BAD", price: 2)
                ]))
        #expect(parsed.skipped == 4)
        #expect(try CoinGeckoMarkets.markets(bytes(body)).get().map(\.symbol) == ["ETH", "NEW", "TINY", "BAD", "ZERO"])
    }

    @Test func errorsAndGarbage() throws {
        #expect(
            CoinGeckoMarkets.ticks(
                bytes(#"{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit."}}"#),
                receivedAt: t0)
                == .invalid("CoinGecko coins/markets: error: You've exceeded the Rate Limit."))
        #expect(
            CoinGeckoMarkets.ticks(bytes(#"{"error":"coin not found"}"#), receivedAt: t0)
                == .invalid("CoinGecko coins/markets: error: coin not found"))
        #expect(
            CoinGeckoMarkets.ticks(bytes(#"{"x":1}"#), receivedAt: t0)
                == .invalid("CoinGecko coins/markets: expected an array, found an object"))
        #expect(
            CoinGeckoMarkets.ticks(bytes("<html>502 Bad Gateway</html>"), receivedAt: t0)
                == .invalid("CoinGecko coins/markets: not JSON at byte 0 (expected a JSON value)"))
        #expect(CoinGeckoMarkets.ticks(bytes("[]"), receivedAt: t0) == .ticks([]))
        #expect(
            CoinGeckoMarkets.markets(bytes("[1,"))
                == .failure(
                    FeedPayloadError(
                        "CoinGecko coins/markets: not JSON at byte 3 (expected a JSON value, found end of input)")))
    }
}

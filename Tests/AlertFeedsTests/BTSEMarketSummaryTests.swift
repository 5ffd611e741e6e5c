import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct BTSEMarketSummaryTests {
    /// The docs' example entry plus variants: a futures market, another quote, nulls, strings.
    let body = #"""
        [{"symbol":"BTC-USDT","last":36990,"percentageChange":-4.5,"base":"BTC","quote":"USDT","active":true,"futures":false},
         {"symbol":"BTCPFC","last":36365,"percentageChange":4.973731309,"base":"BTC","quote":"USD","active":true,"futures":false},
         {"symbol":"BTC-USD","last":36976,"lowestAsk":37012,"highestBid":36972,"percentageChange":-4.633438649,
          "volume":81456627.51106991,"high24Hr":39478.5,"low24Hr":36821.5,"base":"BTC","quote":"USD","active":true,
          "size":2117.88522,"minValidPrice":0.01,"minOrderSize":1.0E-5,"availableSettlement":null,"futures":false,
          "isMarketOpenToOtc":false,"isMarketOpenToSpot":true},
         {"symbol":"ETH-PERP","last":"1800.5","percentageChange":"2.5","base":"ETH","quote":"USD","active":true,"futures":true},
         {"symbol":"eth-eur","last":null,"percentageChange":1.25,"base":"eth","quote":"eur","active":true,"futures":false},
         {"symbol":"OLD-USD","last":1,"percentageChange":9,"base":"OLD","quote":"USD","active":false},
         {"symbol":"NOCHG-USD","last":1,"percentageChange":null,"base":"NOCHG","quote":"USD","active":true},
         {"last":1}, 3]
        """#

    @Test func entries() throws {
        let summaries = try BTSEMarketSummary.parse(bytes(body)).get()
        #expect(summaries.count == 7)
        #expect(
            summaries[2]
                == BTSESummary(
                    symbol: "BTC-USD", base: "BTC", quote: "USD", last: 36976,
                    percentageChange: -4.633438649, active: true, futures: false))
        #expect(
            summaries[3]
                == BTSESummary(
                    symbol: "ETH-PERP", base: "ETH", quote: "USD", last: 1800.5,
                    percentageChange: 2.5, active: true, futures: true))
        #expect(
            summaries[4]
                == BTSESummary(
                    symbol: "ETH-EUR", base: "ETH", quote: "EUR", last: nil,
                    percentageChange: 1.25, active: true, futures: false))
        #expect(summaries[5].futures == false && summaries[5].active == false)
    }

    /// Plain spot `BASE-USD` wins over `BTCPFC` (flagged spot in the docs) and other quotes;
    /// futures lose to any spot market.
    @Test func changeByIndexSymbol() throws {
        let summaries = try BTSEMarketSummary.parse(bytes(body)).get()
        #expect(BTSEMarketSummary.changeByIndexSymbol(summaries) == ["BTC": -4.633438649, "ETH": 1.25, "OLD": 9])
        #expect(
            BTSEMarketSummary.changeByIndexSymbol(summaries, preferredQuote: "USDT") == [
                "BTC": -4.5, "ETH": 1.25, "OLD": 9
            ])
    }

    @Test func badBodies() throws {
        #expect(
            BTSEMarketSummary.parse(bytes(#"{"code":-1,"msg":null,"data":null,"success":false}"#))
                == .failure(FeedPayloadError("BTSE market_summary: expected an array, found an object")))
        #expect(
            BTSEMarketSummary.parse(bytes(""))
                == .failure(
                    FeedPayloadError(
                        "BTSE market_summary: not JSON at byte 0 (expected a JSON value, found end of input)")))
        #expect(try BTSEMarketSummary.parse(bytes(" [ ] ")).get() == [])
    }
}

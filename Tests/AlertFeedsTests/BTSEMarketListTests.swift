import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

@Suite struct BTSEMarketListTests {
    static let fixture = fixturesFolder + "/btse_futures_inquire_initial_market.json"

    @Test func recordedPayload() throws {
        let markets = try BTSEMarketList.load(path: Self.fixture)
        #expect(markets.count == 227)
        #expect(markets.filter(\.future).count == 71)
        #expect(markets.filter { !$0.future }.count == 156)
        #expect(markets.allSatisfy { $0.active })
        let btc = try #require(markets.first { $0.symbol == "BTC-PERP" })
        #expect(
            btc
                == Market(
                    symbol: "BTC-PERP", name: "BTC-PERP-USD", base: "BTC", quote: "USD", future: true, active: true))
        #expect(MarketList(markets).entries(for: "btc-perp").count == 1)
    }

    @Test func bareArrayNullsUnknownFieldsAndSkippedEntries() throws {
        let json = #"""
            [{"symbol":"ETH-USD","marketName":null,"baseCurrency":"ETH","quoteCurrency":"USD","future":false,
              "active":true,"extra":{"x":[1.0E-5]}},
             {"marketName":"NOSYMBOL"}, {"symbol":null}, 42,
             {"symbol":"X","future":null,"active":null,"baseCurrency":null}]
            """#
        let (markets, skipped) = try BTSEMarketList.decodeCounting(Data(json.utf8), source: "inline")
        #expect(skipped == 3)
        #expect(
            markets == [
                Market(symbol: "ETH-USD", name: "", base: "ETH", quote: "USD", future: false, active: true),
                Market(symbol: "X", name: "", base: "", quote: "", future: false, active: false)
            ])
    }

    @Test func malformedPayloads() {
        func message(_ json: String) -> String? {
            do {
                _ = try BTSEMarketList.decode(Array(json.utf8), source: "markets.json")
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(message(#"{"code":1,"msg":"success"}"#) == #"markets.json: not a BTSE market list: no "data" array"#)
        #expect(message(#"{"data":{}}"#) == #"markets.json: not a BTSE market list: no "data" array"#)
        #expect(message("42") == "markets.json: not a BTSE market list: expected an object or an array")
        #expect(message("{\"data\": [") == "markets.json: not valid JSON")
        #expect(throws: BTSEMarketListError.self) {
            _ = try BTSEMarketList.load(path: fixturesFolder + "/btse_coinIndex_README_snippet.txt")
        }
    }

    @Test func missingFile() {
        #expect {
            _ = try BTSEMarketList.load(path: "nowhere/markets.json")
        } throws: { error in
            "\(error)" == "cannot open nowhere/markets.json: No such file or directory"
        }
    }
}

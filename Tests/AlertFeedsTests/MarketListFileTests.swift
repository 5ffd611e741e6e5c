import AlertModel
import Foundation
import Testing

@testable import AlertFeeds

/// `--markets NAME=FILE` (rules v3 §3): a source's market list read from a file in its
/// exchange's own REST format, its entries the `BASE/QUOTE` symbols its ticks carry.
@Suite struct MarketListFileTests {
    static func file(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "pricealert-markets-\(UUID().uuidString).json"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func eachExchangeFormatGivesItsSpotMarketsInCommonCodes() throws {
        let kraken = try Self.file(exchangeFixture("kraken_AssetPairs.json"))
        defer { try? FileManager.default.removeItem(atPath: kraken) }
        let markets = try MarketListFile.load(path: kraken, type: "kraken")
        #expect(markets.map(\.symbol) == ["BTC/USD", "DOGE/EUR", "ETH/BTC"])
        #expect(markets.map(\.name) == ["XXBTZUSD", "XDGEUR", "XETHXXBT"])
        #expect(markets.map(\.active) == [true, true, false])
        #expect(markets.allSatisfy { !$0.future })
        let binance = try Self.file(exchangeFixture("binance_exchangeInfo.json"))
        defer { try? FileManager.default.removeItem(atPath: binance) }
        let list = try MarketListFile.load(path: binance, type: "binance")
        #expect(!list.isEmpty && list.allSatisfy { $0.symbol == "\($0.base)/\($0.quote)" })
    }

    @Test func aWrongFormatAnUnreadableFileAndATypeWithoutAListAreNamed() throws {
        let kraken = try Self.file(exchangeFixture("kraken_AssetPairs.json"))
        defer { try? FileManager.default.removeItem(atPath: kraken) }
        #expect(throws: BTSEMarketListError(source: kraken, reason: #"Binance exchangeInfo: no "symbols" array"#)) {
            try MarketListFile.load(path: kraken, type: "binance")
        }
        let missing = NSTemporaryDirectory() + "pricealert-no-such-\(UUID().uuidString).json"
        #expect(throws: BTSEMarketListError(source: missing, reason: "No such file or directory", action: "open")) {
            try MarketListFile.load(path: missing, type: "okx")
        }
        do {
            _ = try MarketListFile.load(path: kraken, type: "poloniex-legacy")
            Issue.record("poloniex-legacy has no market list file")
        } catch {
            #expect(error.description.hasPrefix("\(kraken): a source of type poloniex-legacy has no market list file"))
        }
    }
}

import ParserFuzzing
import Testing

@testable import AlertFeeds

/// The `*-frame` fuzz targets check that the ticker parsers' token and tree readings agree;
/// that proves something about the token readers only if the fuzzer's inputs reach them. Of
/// each campaign's first 3 000 inputs, at least one in 50 must be a frame the token reader
/// takes (the hot ticker shape, mutated; 3–8 % at seed 16, so 1 000 000 inputs give it tens of
/// thousands), and most the frames it leaves to the tree.
@Suite("fuzz: the frame targets reach the token readers", .computation)
struct TickerTokenPathFuzzTests {
    @Test(arguments: ["binance-frame", "coinbase-frame", "kraken-frame", "bybit-frame", "okx-frame"])
    func campaignInputsReachTheTokenReader(name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let campaign = try FuzzCampaign(
            target: target, seed: 16, repository: FuzzSmokeTests.repository, fixtures: FuzzSmokeTests.fixtures)
        let inputs = 3_000
        let taken = (0..<inputs).count { index in
            let frame = campaign.input(index)
            switch name {
            case "binance-frame": return BinanceTicker.tokenParse(frame) != nil
            case "coinbase-frame": return CoinbaseTicker.tokenRead(frame) != nil
            case "kraken-frame": return KrakenTicker.tokenParse(frame) != nil
            case "bybit-frame": return BybitTicker.tokenParse(frame) != nil
            default: return OKXTicker.tokenParse(frame) != nil
            }
        }
        #expect(taken >= inputs / 50, "\(name): the token reader took \(taken) of \(inputs) inputs")
        #expect(taken <= inputs * 19 / 20, "\(name): the token reader took \(taken) of \(inputs) inputs")
        print("\(name): the token reader took \(taken) of \(inputs) inputs")
    }
}

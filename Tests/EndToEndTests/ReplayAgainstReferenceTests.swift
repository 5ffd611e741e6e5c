import AlertFeeds
import AlertModel
import AlertRules
import AlertSinks
import AlertTestSupport
import Foundation
import Testing

/// The README's sample replay (the demo rules over the bundled sample stream, with the BTSE
/// market list) run by the built binary, checked alert by alert against the naive reference.
@Suite("end to end: replay equals the reference", .programs)
struct ReplayAgainstReferenceTests {
    @Test func demoRulesOverTheSampleStream() async throws {
        let repo = PriceAlertBinary.repo
        let rulesPath = repo.appendingPathComponent("Rules/demo.json").path
        let ticksPath = repo.appendingPathComponent("Samples/ticks.jsonl").path
        let marketsPath = repo.appendingPathComponent("Samples/btse-markets.json").path

        let result = try await PriceAlertBinary.run([
            "replay", "--rules", rulesPath, "--ticks", ticksPath,
            "--markets", marketsPath, "--format", "json"
        ])
        #expect(result.status == 0)
        let printed = try result.stdout.split(separator: "\n").map { line -> String in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return "\(object["id"]!) \(object["value"]!)"
        }

        let rules = try RuleLoader.loadFiles(paths: [rulesPath]).get().rules
        let reference = ReferenceEngine(rules: rules, markets: MarketList(try BTSEMarketList.load(path: marketsPath)))
        var expected: [String] = []
        try TickFileReader(path: ticksPath).forEachLine { _, parsed in
            for (_, _, _, value, id) in reference.process(try parsed.get()) {
                expected.append("\(id) \(NSNumber(value: value))")
            }
        }
        #expect(expected.count > 20)
        #expect(printed == expected)
        #expect(result.stderr.hasSuffix("replay: 5040 ticks read, 0 dropped, \(expected.count) alerts\n"))
    }
}

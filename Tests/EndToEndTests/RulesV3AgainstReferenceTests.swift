import AlertModel
import AlertTestSupport
import Foundation
import SeededRandom
import Testing

/// Random version 3 rule files (sources, every kind of series, qualified symbols, `match` with
/// `source`, a sourced portfolio, volume) with version 1 and 2 files beside, and multi-source
/// streams (wicks, outages, volumes, bad lines), through the built binary: `replay`, and `check
/// --ticks` over pieces of the stream with one state folder, each give the events of the
/// reference (`ReferenceEngineV2`, which reads version 3), with each source's market list given
/// as `--markets NAME=FILE` in its exchange's format.
@Suite("end to end: rules v3 equal the reference")
struct RulesV3AgainstReferenceTests {
    static let start: Int64 = 1_700_000_000_000

    struct Case {
        var dir: URL
        var arguments: [String]
        var expected: [String]
        var lines: [String]
    }

    /// Writes the rule files, the market lists and the stream's lines (with a line that is not
    /// a tick), and the reference's events as `id kind reminder source value`.
    static func make(seed: UInt64) throws -> Case {
        var rng = SeededRandom(seed: seed)
        let ticks = RandomRulesV3.ticks(&rng, count: 1500, start: start)
        let files = [
            RandomRulesV3.file(&rng, count: 40, prefix: "x"),
            RandomRulesV2.file(&rng, count: 20, expiresAt: ticks[700].time),
            #"""
            {"version": 1, "rules": [
              {"id": "w0", "symbol": "AAA", "when": {"change": {"window": "5m", "above": 1}}, "hysteresis": 0.5},
              {"id": "w1", "symbol": "BBB", "when": {"price": {"crossesBelow": 100}}, "cooldown": "1m"},
              {"id": "w2", "match": {"quote": "USD"}, "when": {"price": {"above": 101}}}]}
            """#
        ]
        let markets = RandomRulesV3.markets()
        let reference = try ReferenceEngineV2(files: files, markets: markets.none, sourceMarkets: markets.bySource)
        var lines: [String] = []
        var expected: [String] = []
        for (i, tick) in ticks.enumerated() {
            if i == 300 { lines.append("not a tick") }
            lines.append(TickFormat.json(tick))
            for event in reference.process(tick) {
                expected.append(
                    "\(event.id) \(event.kind.rawValue) \(event.reminder.map(String.init) ?? "-") \(event.source ?? "-") \(event.value)"
                )
            }
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-v3-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func write(_ text: String, _ name: String) throws {
            try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        var arguments: [String] = []
        for (i, text) in files.enumerated() {
            try write(text, "r\(i).json")
            arguments += ["--rules", "r\(i).json"]
        }
        let marketFiles = RandomRulesV3.marketFiles()
        try write(marketFiles.none, "markets.json")
        arguments += ["--markets", "markets.json"]
        for (name, text) in marketFiles.bySource.sorted(by: { $0.key < $1.key }) {
            try write(text, "markets-\(name).json")
            arguments += ["--markets", "\(name)=markets-\(name).json"]
        }
        return Case(dir: dir, arguments: arguments, expected: expected, lines: lines)
    }

    /// `id kind reminder source value` of each printed JSON event.
    static func events(_ stdout: String) throws -> [String] {
        try stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let value = try #require(object["value"] as? NSNumber).doubleValue
            return
                "\(object["id"]!) \(object["kind"]!) \(object["reminder"].map { "\($0)" } ?? "-") \(object["source"].map { "\($0)" } ?? "-") \(value)"
        }
    }

    static func firstDisagreement(_ got: [String], _ expected: [String]) -> String? {
        if let k = zip(got, expected).enumerated().first(where: {
            !RulesV2AgainstReferenceTests.agree([$0.element.0], [$0.element.1])
        })?.offset {
            return "first difference at \(k): binary \(got[k]) vs reference \(expected[k])"
        }
        return got.count == expected.count ? nil : "binary \(got.count) events, reference \(expected.count)"
    }

    @Test(arguments: [4, 9] as [UInt64])
    func replay(seed: UInt64) async throws {
        let c = try Self.make(seed: seed)
        defer { try? FileManager.default.removeItem(at: c.dir) }
        try (c.lines.joined(separator: "\n") + "\n").write(
            to: c.dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let result = try await PriceAlertBinary.run(
            ["replay"] + c.arguments + ["--ticks", "ticks.jsonl", "--format", "json"], in: c.dir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(c.expected.count > 100)
        #expect(c.expected.contains { $0.contains(" ex-") } && c.expected.contains { $0.contains(":@") })
        let printed = try Self.events(result.stdout)
        #expect(
            RulesV2AgainstReferenceTests.agree(printed, c.expected),
            "\(Self.firstDisagreement(printed, c.expected) ?? "")")
        #expect(result.stderr.contains("ticks.jsonl:301: error:"), "the bad line is named")
    }

    @Test(arguments: [5] as [UInt64])
    func checksOverPieces(seed: UInt64) async throws {
        let c = try Self.make(seed: seed)
        defer { try? FileManager.default.removeItem(at: c.dir) }
        var rng = SeededRandom(seed: seed)
        var listed: [String] = []
        var at = 0
        var piece = 0
        while at < c.lines.count {
            let end = min(c.lines.count, at + Int.random(in: 50...300, using: &rng))
            let name = "piece\(piece).jsonl"
            try (c.lines[at..<end].joined(separator: "\n") + "\n").write(
                to: c.dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
            let check = try await PriceAlertBinary.run(
                ["check"] + c.arguments + ["--ticks", name, "--state", "st", "--format", "json"], in: c.dir)
            #expect(check.status == 0, "\(check.stderr.suffix(3000))")
            listed += try Self.events(check.stdout)
            at = end
            piece += 1
        }
        #expect(piece > 3)
        #expect(
            RulesV2AgainstReferenceTests.agree(listed, c.expected),
            "\(Self.firstDisagreement(listed, c.expected) ?? "")")
    }

    @Test("--markets NAME=FILE: a source no rule file defines, and a file not in its exchange's format, are named")
    func badMarketsOptions() async throws {
        let c = try Self.make(seed: 1)
        defer { try? FileManager.default.removeItem(at: c.dir) }
        try "{}\n".write(to: c.dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        try #"{"symbols": []}"#.write(
            to: c.dir.appendingPathComponent("binance.json"), atomically: true, encoding: .utf8)
        let rules = ["--rules", "r0.json"]
        let unknown = try await PriceAlertBinary.run(
            ["replay"] + rules + ["--ticks", "ticks.jsonl", "--markets", "nope=markets.json"], in: c.dir)
        #expect(unknown.status == 64)
        #expect(
            unknown.stderr.contains(
                "--markets nope=markets.json: no source 'nope' in the rule files (defined: ex-a, ex-b, ex-c)"))
        let wrong = try await PriceAlertBinary.run(
            ["replay"] + rules + ["--ticks", "ticks.jsonl", "--markets", "ex-b=binance.json"], in: c.dir)
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("--markets ex-b: binance.json: "), "\(wrong.stderr)")
    }
}

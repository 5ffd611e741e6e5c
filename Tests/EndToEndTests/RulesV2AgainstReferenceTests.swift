import AlertModel
import AlertTestSupport
import Foundation
import SeededRandom
import Testing

/// Random version 1 + version 2 rule files, seeded history (`--history`) and live streams with
/// bad lines, through the built binary: `replay`, and `check` over pieces of the stream with one
/// state folder, each give the events of `ReferenceEngineV2`.
@Suite("end to end: rules v2 equal the reference")
struct RulesV2AgainstReferenceTests {
    static let start: Int64 = 1_700_000_000_000

    struct Case {
        var dir: URL
        var files: [String]
        var expected: [String]
        var lines: [String]
    }

    /// Writes the rule files, `history.jsonl` (hourly candles as seeded ticks) and the stream's
    /// lines (with a line that is not a tick), and the reference's events as `id kind value`.
    static func make(seed: UInt64) throws -> Case {
        var rng = SeededRandom(seed: seed)
        let ticks = RandomRulesV2.ticks(&rng, count: 1200, start: start)
        let v2 = RandomRulesV2.file(&rng, count: 30, expiresAt: ticks[600].time)
        let v1 = #"""
            {"version": 1, "rules": [
              {"id": "w0", "symbol": "AAA", "when": {"change": {"window": "48h", "above": 1}}, "hysteresis": 0.5},
              {"id": "w1", "symbol": "BBB", "when": {"price": {"crossesBelow": 100}}, "cooldown": "1m"},
              {"id": "w2", "symbol": "CCC", "when": {"change": {"window": "24h", "below": -1}}}]}
            """#
        let files = [v2, v1]
        let candles = RandomRulesV2.candles(&rng, hours: 60, before: start)
        let reference = try ReferenceEngineV2(files: files)
        var history: [String] = []
        for (symbol, candle) in candles {
            reference.seed(
                symbol: symbol, start: candle.start, end: candle.end, high: candle.high, low: candle.low,
                close: candle.close)
            history += candle.seededTicks(symbol: symbol).map(TickFormat.json)
        }
        var lines: [String] = []
        var expected: [String] = []
        for (i, tick) in ticks.enumerated() {
            if i == 300 { lines.append("not a tick") }
            lines.append(TickFormat.json(tick))
            for event in reference.process(tick) {
                expected.append(
                    "\(event.id) \(event.kind.rawValue) \(event.reminder.map(String.init) ?? "-") \(event.value)")
            }
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-v2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (i, text) in files.enumerated() {
            try text.write(to: dir.appendingPathComponent("r\(i).json"), atomically: true, encoding: .utf8)
        }
        try (history.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("history.jsonl"), atomically: true, encoding: .utf8)
        return Case(dir: dir, files: files.indices.map { "r\($0).json" }, expected: expected, lines: lines)
    }

    /// Whether two `id kind reminder value` lists agree: the same events, values within the
    /// rounding of the event JSON's number text.
    static func agree(_ a: [String], _ b: [String]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            let (xs, ys) = (x.split(separator: " "), y.split(separator: " "))
            guard xs.dropLast() == ys.dropLast(), let u = Double(xs.last!), let v = Double(ys.last!) else {
                return false
            }
            return abs(u - v) <= 1e-9 * max(1, abs(v))
        }
    }

    /// `id kind reminder value` of each printed JSON event.
    static func events(_ stdout: String) throws -> [String] {
        try stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let value = try #require(object["value"] as? NSNumber).doubleValue
            return "\(object["id"]!) \(object["kind"]!) \(object["reminder"].map { "\($0)" } ?? "-") \(value)"
        }
    }

    @Test(arguments: [4, 9] as [UInt64])
    func replayWithHistory(seed: UInt64) async throws {
        let c = try Self.make(seed: seed)
        defer { try? FileManager.default.removeItem(at: c.dir) }
        try (c.lines.joined(separator: "\n") + "\n").write(
            to: c.dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let rules = c.files.flatMap { ["--rules", $0] }
        let result = try await PriceAlertBinary.run(
            ["replay"] + rules + ["--history", "history.jsonl", "--ticks", "ticks.jsonl", "--format", "json"], in: c.dir
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(c.expected.count > 50)
        let printed = try Self.events(result.stdout)
        #expect(Self.agree(printed, c.expected))
        if let k = zip(printed, c.expected).enumerated().first(where: { !Self.agree([$0.element.0], [$0.element.1]) })?
            .offset
        {
            Issue.record("first difference at \(k): binary \(printed[k]) vs reference \(c.expected[k])")
        }
        #expect(result.stderr.contains("ticks.jsonl:301: error:"), "the bad line is named")
    }

    @Test(arguments: [5] as [UInt64])
    func checksOverPiecesWithHistory(seed: UInt64) async throws {
        let c = try Self.make(seed: seed)
        defer { try? FileManager.default.removeItem(at: c.dir) }
        var rng = SeededRandom(seed: seed)
        let rules = c.files.flatMap { ["--rules", $0] }
        var listed: [String] = []
        var at = 0
        var piece = 0
        while at < c.lines.count {
            let end = min(c.lines.count, at + Int.random(in: 50...300, using: &rng))
            let name = "piece\(piece).jsonl"
            try (c.lines[at..<end].joined(separator: "\n") + "\n").write(
                to: c.dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
            let history = piece == 0 ? ["--history", "history.jsonl"] : []
            let check = try await PriceAlertBinary.run(
                ["check"] + rules + history + ["--ticks", name, "--state", "st", "--format", "json"], in: c.dir)
            #expect(check.status == 0, "\(check.stderr.suffix(3000))")
            listed += try Self.events(check.stdout)
            at = end
            piece += 1
        }
        #expect(piece > 3)
        #expect(Self.agree(listed, c.expected))
        if let k = zip(listed, c.expected).enumerated().first(where: { !Self.agree([$0.element.0], [$0.element.1]) })?
            .offset
        {
            Issue.record("first difference at \(k): checks \(listed[k]) vs reference \(c.expected[k])")
        }
    }
}

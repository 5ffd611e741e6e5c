import AlertTestSupport
import Foundation
import Testing

/// `replay --report`: the page's counts agree with the events `--format json` lists.
@Suite("end to end: replay --report", .programs)
struct ReplayReportCommandTests {
    /// Three days of ticks every 10 minutes: BTC swings around 50 000 (a rule without cooldown
    /// fires on most swings, one with a cooldown far less), ETH drifts down through 2 000 once.
    /// Writes the sample into a fresh temporary folder (the caller removes it).
    static func sample() throws -> (dir: URL, rules: String, ticks: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let rules = """
            {"version": 1, "rules": [
              {"id": "btc-above-50k", "symbol": "BTC", "when": {"price": {"above": 50000}},
               "message": "{{symbol}} <above> 50k & \\"rising\\""},
              {"id": "btc-above-50k-calm", "symbol": "BTC", "when": {"price": {"above": 50000}}, "cooldown": "6h"},
              {"id": "eth-below-2000", "symbol": "ETH", "when": {"price": {"crossesBelow": 2000}}},
              {"id": "never", "symbol": "BTC", "when": {"price": {"above": 1000000}}}
            ]}
            """
        var ticks = ""
        let start: Int64 = 1_700_000_000_000
        for i in 0..<432 {
            let time = start + Int64(i) * 600_000
            ticks +=
                "{\"time\": \(time), \"symbol\": \"BTC\", \"price\": \(50000 + (600 * sin(Double(i) * 0.7)).rounded())}\n"
            ticks += "{\"time\": \(time + 1), \"symbol\": \"ETH\", \"price\": \(2100 - Double(i) * 0.5)}\n"
        }
        let rulesURL = dir.appendingPathComponent("rules.json"), ticksURL = dir.appendingPathComponent("ticks.jsonl")
        try rules.write(to: rulesURL, atomically: true, encoding: .utf8)
        try ticks.write(to: ticksURL, atomically: true, encoding: .utf8)
        return (dir, rulesURL.path, ticksURL.path)
    }

    struct Counts: Equatable, CustomStringConvertible {
        var alert = 0, reminder = 0, resolved = 0
        mutating func add(_ kind: String) {
            switch kind {
            case "reminder": reminder += 1
            case "resolved": resolved += 1
            default: alert += 1
            }
        }
        var description: String { "\(alert)/\(reminder)/\(resolved)" }
    }

    struct RuleSummary: Equatable {
        var counts = Counts()
        var first = "", last = ""
        var days: [String: Counts] = [:]
    }

    static func unescape(_ text: Substring) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func counts(in html: Substring) throws -> Counts {
        func number(_ kind: String) throws -> Int {
            let match = try #require(html.firstMatch(of: try Regex("<td class=\"n \(kind)\">(\\d+)</td>")))
            return Int(match.output[1].substring!)!
        }
        return Counts(alert: try number("alert"), reminder: try number("reminder"), resolved: try number("resolved"))
    }

    @Test("per rule, per kind, per day, first and last: the page agrees with the JSON events")
    func countsMatchEvents() async throws {
        let (dir, rules, ticks) = try Self.sample()
        defer { try? FileManager.default.removeItem(at: dir) }
        let page = dir.appendingPathComponent("report.html").path

        let result = try await PriceAlertBinary.run([
            "replay", "--rules", rules, "--ticks", ticks, "--format", "json", "--report", page
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("replay: report written to \(page)"))

        // What the events say.
        var expected: [String: RuleSummary] = [:]
        var perSymbol: [String: Int] = [:]
        var messages: [String] = []
        for line in result.stdout.split(separator: "\n") {
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let rule = try #require(event["rule"] as? String), time = try #require(event["time"] as? String)
            let kind = event["kind"] as? String ?? "alert"
            var summary = expected[rule] ?? RuleSummary()
            summary.counts.add(kind)
            if summary.first.isEmpty || time < summary.first { summary.first = time }
            if time > summary.last { summary.last = time }
            summary.days[String(time.prefix(10)), default: Counts()].add(kind)
            expected[rule] = summary
            perSymbol[try #require(event["symbol"] as? String), default: 0] += 1
            messages.append(try #require(event["message"] as? String))
        }
        // The sample is meant to tell a noisy rule from a calm one, over several days.
        #expect(
            (expected["btc-above-50k"]?.counts.alert ?? 0) > 3 * (expected["btc-above-50k-calm"]?.counts.alert ?? 0))
        #expect((expected["btc-above-50k"]?.days.count ?? 0) >= 3)
        #expect(expected["eth-below-2000"]?.counts.alert == 1)
        #expect(expected["never"] == nil)

        // What the page says.
        let html = try String(contentsOfFile: page, encoding: .utf8)
        var shown: [String: RuleSummary] = [:]
        var order: [String] = []
        for row in html.matches(of: #/<tr class="rule[^"]*" data-rule="([^"]*)">(.*?)</tr>/#) {
            let rule = Self.unescape(row.output.1)
            order.append(rule)
            var summary = RuleSummary()
            summary.counts = try Self.counts(in: row.output.2)
            summary.first = String(
                try #require(row.output.2.firstMatch(of: #/<td class="first"><time datetime="([^"]+)"/#)).output.1)
            summary.last = String(
                try #require(row.output.2.firstMatch(of: #/<td class="last"><time datetime="([^"]+)"/#)).output.1)
            shown[rule] = summary
        }
        for table in html.matches(of: #/<table class="days" data-rule="([^"]*)">(.*?)</table>/#.dotMatchesNewlines()) {
            let rule = Self.unescape(table.output.1)
            for day in table.output.2.matches(of: #/<tr data-day="([0-9-]+)">(.*?)</tr>/#) {
                shown[rule, default: RuleSummary()].days[String(day.output.1)] = try Self.counts(in: day.output.2)
            }
        }
        #expect(shown == expected)
        let totals = order.map {
            expected[$0]!.counts.alert + expected[$0]!.counts.reminder + expected[$0]!.counts.resolved
        }
        #expect(totals == totals.sorted(by: >), "rules are listed noisiest first")
        #expect(html.contains("<tr class=\"rule noisiest\" data-rule=\"btc-above-50k\">"))
        #expect(html.contains("1 rule would have sent nothing: <code>never</code>"))

        // One chart per symbol; every event is drawn or counted beside a drawn one, with its message.
        for (symbol, events) in perSymbol {
            let section = try #require(
                html.firstMatch(
                    of: try Regex("<section class=\"symbol\" data-symbol=\"\(symbol)\">(.*?)</section>")
                        .dotMatchesNewlines()))
            let text = section.output[1].substring!
            #expect(text.contains("<span class=\"n events\">\(events)</span> events"))
            let drawn = text.matches(of: #/<circle class="ev /#).count
            let near = text.matches(of: #/\(\+(\d+) more events near this one\)/#).reduce(0) { $0 + Int($1.output.1)! }
            #expect(drawn + near == events)
        }
        #expect(html.contains("BTC &lt;above&gt; 50k &amp; &quot;rising&quot;"))
        let special = try #require(messages.first { $0.contains("<") })
        #expect(!html.contains(special), "messages are escaped")

        // Self-contained: nothing fetched, nothing run.
        for reference in [
            "src=", "href=", "<script", "<link", "<img", "<iframe", "url(", "@import", "http://", "https://"
        ] {
            #expect(!html.lowercased().contains(reference), "the page has \(reference)")
        }
    }

    @Test("a report file that cannot be created fails before the replay, naming it")
    func unwritableReport() async throws {
        let (dir, rules, ticks) = try Self.sample()
        defer { try? FileManager.default.removeItem(at: dir) }
        let page = dir.appendingPathComponent("missing/report.html").path
        let result = try await PriceAlertBinary.run(["replay", "--rules", rules, "--ticks", ticks, "--report", page])
        #expect(result.status == 73)
        #expect(result.stderr.contains("pricealert: error: cannot open report \(page): No such file or directory"))
        #expect(result.stdout.isEmpty)
    }
}

import AlertModel
import Testing

@testable import AlertReport

@Suite("replay report")
struct ReplayReportTests {
    static let hour: Int64 = 3_600_000
    static let start: Int64 = 1_700_000_000_000

    static func alert(_ rule: String, _ symbol: String, _ time: Int64, _ price: Double, message: String = "m") -> Alert
    {
        Alert(
            rule: rule, symbol: symbol, time: time, price: price, condition: "price above 1",
            threshold: .value(1), value: price, message: message, notify: [])
    }

    @Test("every user string is escaped: rule ids, symbols, messages, sources")
    func escaping() {
        var report = ReplayReport(ruleIDs: ["<b>\"r&'"], sources: [("Ticks", "<i>t.jsonl")])
        report.add(Tick(time: Self.start, symbol: "<SYM>", price: 2))
        report.add(Self.alert("<b>\"r&'", "<SYM>", Self.start, 2, message: "</title><script>x()</script>"))
        let page = report.html()
        #expect(!page.contains("<script"))
        #expect(!page.contains("<b>"))
        #expect(!page.contains("<SYM>"))
        #expect(!page.contains("<i>"))
        #expect(page.contains("&lt;b&gt;&quot;r&amp;&#39;"))
        #expect(page.contains("&lt;/title&gt;&lt;script&gt;x()&lt;/script&gt;"))
        #expect(page.contains("data-symbol=\"&lt;SYM&gt;\""))
    }

    @Test("rules are ordered by events, the noisiest marked; rules that sent nothing are named")
    func noisiestFirst() {
        var report = ReplayReport(ruleIDs: ["quiet", "calm", "loud", "silent"], sources: [])
        report.add(Tick(time: Self.start, symbol: "BTC", price: 10))
        report.add(Self.alert("quiet", "BTC", Self.start, 10))
        for i in 0..<5 { report.add(Self.alert("loud", "BTC", Self.start + Int64(i) * Self.hour, 10)) }
        for i in 0..<2 { report.add(Self.alert("calm", "BTC", Self.start + Int64(i) * Self.hour, 10)) }
        let page = report.html()
        let rows = page.split(separator: "\n").filter { $0.hasPrefix("<tr class=\"rule") }
        #expect(rows.count == 3)
        #expect(rows.first?.hasPrefix("<tr class=\"rule noisiest\" data-rule=\"loud\"") == true)
        #expect(rows.dropFirst().allSatisfy { !$0.contains("noisiest") })
        #expect(rows.map { $0.contains("data-rule=\"calm\"") } == [false, true, false])
        #expect(page.contains("1 rule would have sent nothing: <code>silent</code>"))
    }

    @Test("alerts, reminders and resolved events are counted apart, per rule and per day, and drawn in their colour")
    func kinds() throws {
        var report = ReplayReport(ruleIDs: ["r"], sources: [])
        let day: Int64 = 86_400_000
        report.add(Tick(time: Self.start, symbol: "BTC", price: 10))
        var alert = Self.alert("r", "BTC", Self.start, 10)
        report.add(alert)
        alert.time += 600_000
        alert.kind = .reminder
        alert.reminder = 1
        report.add(alert)
        alert.time += 600_000
        alert.reminder = 2
        report.add(alert)
        alert.time += day
        alert.kind = .resolved
        alert.reminder = nil
        report.add(alert)
        let page = report.html()
        #expect(
            page.contains("<td class=\"n alert\">1</td><td class=\"n reminder\">2</td><td class=\"n resolved\">1</td>"))
        #expect(
            page.contains(
                "<tr data-day=\"2023-11-14\"><th scope=\"row\">2023-11-14</th><td class=\"n alert\">1</td><td class=\"n reminder\">2</td><td class=\"n resolved\">0</td></tr>"
            ))
        #expect(
            page.contains(
                "<tr data-day=\"2023-11-15\"><th scope=\"row\">2023-11-15</th><td class=\"n alert\">0</td><td class=\"n reminder\">0</td><td class=\"n resolved\">1</td></tr>"
            ))
        let chart = page[try #require(page.firstRange(of: "<section class=\"symbol\"")).lowerBound...]
        #expect(chart.matches(of: #/<circle class="ev alert"/#).count == 1)
        #expect(chart.matches(of: #/<circle class="ev reminder"/#).count == 2)
        #expect(chart.matches(of: #/<circle class="ev resolved"/#).count == 1)
    }

    @Test("a long stream is cut to the slots, keeping the extremes and every drawn event's point")
    func downsampling() {
        var track = SymbolTrack(slotCount: 240, markersPerSlot: 2)
        var spikeTime: Int64 = 0
        var dipTime: Int64 = 0
        var markerPoints: [PricePoint] = []
        for i in 0..<200_000 {
            let time = Self.start + Int64(i) * 1000
            var price = 100 + Double(i % 50) / 10
            if i == 123_457 { price = 500; spikeTime = time }
            if i == 7_001 { price = 1; dipTime = time }
            track.add(tick: PricePoint(time: time, price: price))
            if i % 997 == 0 {
                let point = PricePoint(time: time, price: price + 0.01)
                markerPoints.append(point)
                track.add(event: EventMarker(point: point, kind: .alert, rule: "r", message: "m"))
            }
        }
        let line = track.line
        #expect(line.count <= 240 * 4 + 240 * 2)
        #expect(line.contains(PricePoint(time: spikeTime, price: 500)))
        #expect(line.contains(PricePoint(time: dipTime, price: 1)))
        #expect(zip(line, line.dropFirst()).allSatisfy { $0.time <= $1.time })
        let drawn = track.markers
        #expect(drawn.count <= 240 * 2)
        #expect(drawn.count + drawn.reduce(0) { $0 + $1.othersInSlot } == markerPoints.count)
        #expect(drawn.allSatisfy { line.contains($0.marker.point) })
        // Events are spread over the whole stream, not only its start.
        #expect(drawn.last.map { $0.marker.point.time > Self.start + 190_000_000 } == true)
    }

    @Test("the page stays under its bound however long the replay")
    func boundedSize() {
        // Many rules and symbols, events every tick, long messages of characters that escape.
        var report = ReplayReport(ruleIDs: (0..<1500).map { "rule-\($0)" }, sources: [])
        let message = String(repeating: "<\"&'>", count: 100)
        for i in 0..<120_000 {
            let time = Self.start + Int64(i) * 600_000 // 10 minutes apart: over two years
            let symbol = "SYM\(i % 60)"
            report.add(Tick(time: time, symbol: symbol, price: 1 + Double(i % 97)))
            report.add(Self.alert("rule-\(i % 1200)", symbol, time, 1 + Double(i % 97), message: message))
        }
        let page = report.html()
        #expect(page.utf8.count < ReplayReport.sizeBound)
        #expect(page.contains("200 more rules sent"))
        #expect(page.contains("Not charted (fewer events): 40 symbols"))
    }
}

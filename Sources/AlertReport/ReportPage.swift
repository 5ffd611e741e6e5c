import AlertModel

// The page is written by hand, not with a template package: it is one fixed layout, and every
// user string passes through `HTMLText.escape`.
extension ReplayReport {
    /// The whole page, without a final newline: inline CSS and SVG, no scripts, no external references.
    public func html() -> String {
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>pricealert replay report</title>
            <style>\(Self.style)</style>
            </head>
            <body>
            <h1>What these rules would have sent</h1>

            """
        page += summary()
        page += rulesSection()
        page += chartsSection()
        page += daysSection()
        page += """
            <footer>Written by <code>pricealert replay --report</code>. Times are UTC. \
            A chart keeps \(limits.slotsPerChart) time slots per symbol (each with its first, lowest, highest and \
            last price, and up to \(limits.markersPerSlot) events); hover a marker for its message.</footer>
            </body>
            </html>
            """
        return page
    }

    // MARK: - Summary

    private func summary() -> String {
        var out = "<dl class=\"sources\">"
        for (label, value) in sources {
            out += "<dt>\(HTMLText.escape(label))</dt><dd>\(HTMLText.escape(value, limit: 400))</dd>"
        }
        out += "</dl>\n"
        var totals = KindCounts()
        for rule in rules { totals.add(rule.counts) }
        let span =
            if let firstTick, let lastTick {
                " from \(Self.timeElement(firstTick)) to \(Self.timeElement(lastTick))"
            } else { "" }
        out += "<p class=\"summary\">\(ticks) ticks of \(tracks.count) symbol\(tracks.count == 1 ? "" : "s")\(span). "
        out +=
            "\(rules.count) rule\(rules.count == 1 ? "" : "s") would have sent <strong class=\"total\">\(totals.total)</strong> events: "
        out += ReportKind.allCases.map { "<span class=\"n \($0.name)\">\(totals[$0])</span> \($0.plural)" }.joined(
            separator: ", ")
        out += ".</p>\n"
        return out
    }

    /// Rules with events, noisiest first; rules with equal counts in file order.
    var rulesByNoise: [RuleTally] {
        rules.filter { $0.counts.total > 0 }.sorted {
            $0.counts.total != $1.counts.total ? $0.counts.total > $1.counts.total : $0.order < $1.order
        }
    }

    /// Days from the first tick's to the last tick's (UTC day numbers).
    private var dayRange: ClosedRange<Int64>? {
        var low = firstTick, high = lastTick
        for rule in rules {
            if let first = rule.first { low = min(low ?? first, first) }
            if let last = rule.last { high = max(high ?? last, last) }
        }
        guard let low, let high else { return nil }
        return floorDivMod(low, 86_400_000).0...floorDivMod(high, 86_400_000).0
    }

    // MARK: - Rules

    private func rulesSection() -> String {
        let noisy = rulesByNoise
        var out = "<h2>Rules, noisiest first</h2>\n"
        guard let top = noisy.first else {
            return out + "<p>No rule would have sent anything.</p>\n" + silentRules()
        }
        out += """
            <table class="rules">
            <thead><tr><th>Rule</th><th>Alerts</th><th>Reminders</th><th>Resolved</th><th>Total</th>\
            <th>First</th><th>Last</th><th>Busiest day</th><th>Per day</th></tr></thead>
            <tbody>

            """
        let maxTotal = top.counts.total
        for (rank, rule) in noisy.prefix(limits.listedRules).enumerated() {
            let id = HTMLText.escape(rule.id, limit: limits.nameCharacters)
            out += "<tr class=\"rule\(rank == 0 ? " noisiest" : "")\" data-rule=\"\(HTMLText.escape(rule.id))\">"
            out += "<th scope=\"row\">\(id)\(rank == 0 ? " <span class=\"badge\">noisiest</span>" : "")</th>"
            for kind in ReportKind.allCases {
                out += "<td class=\"n \(kind.name)\">\(rule.counts[kind])</td>"
            }
            let width = max(1, rule.counts.total * 80 / maxTotal)
            out +=
                "<td class=\"n total\"><span class=\"bar\" style=\"width:\(width)px\"></span>\(rule.counts.total)</td>"
            out += "<td class=\"first\">\(rule.first.map(Self.timeElement) ?? "")</td>"
            out += "<td class=\"last\">\(rule.last.map(Self.timeElement) ?? "")</td>"
            if let busiest = rule.busiestDay {
                out +=
                    "<td class=\"busiest\">\(Self.dayText(busiest.day)): <span class=\"n\">\(busiest.events)</span></td>"
            } else {
                out += "<td class=\"busiest\"></td>"
            }
            out += "<td class=\"perday\">\(rank < limits.rulesWithDays ? daySparkline(rule) : "")</td></tr>\n"
        }
        out += "</tbody></table>\n"
        if noisy.count > limits.listedRules {
            let rest = noisy.dropFirst(limits.listedRules)
            out += "<p class=\"more\">\(rest.count) more rules sent \(rest.reduce(0) { $0 + $1.counts.total }) events "
            out += "(at most \(rest.first!.counts.total) each); they are not listed.</p>\n"
        }
        return out + silentRules()
    }

    private func silentRules() -> String {
        let silent = rules.filter { $0.counts.total == 0 }
        guard !silent.isEmpty else { return "" }
        var out = "<p class=\"silent\">\(silent.count) rule\(silent.count == 1 ? "" : "s") would have sent nothing: "
        out += silent.prefix(limits.listedSilentRules).map {
            "<code>\(HTMLText.escape($0.id, limit: limits.nameCharacters))</code>"
        }.joined(separator: ", ")
        if silent.count > limits.listedSilentRules { out += ", …" }
        return out + ".</p>\n"
    }

    /// Events per day over the replay's days, one bar per day (or per group of days when the
    /// replay spans more than 32), scaled to the rule's busiest bar.
    private func daySparkline(_ rule: RuleTally) -> String {
        guard let range = dayRange else { return "" }
        let dayCount = Int(range.upperBound - range.lowerBound + 1)
        let perBar = (dayCount + 31) / 32
        let barCount = (dayCount + perBar - 1) / perBar
        var bars = Array(repeating: 0, count: barCount)
        for (day, counts) in rule.days where range.contains(day) {
            bars[Int(day - range.lowerBound) / perBar] += counts.total
        }
        let peak = max(1, bars.max() ?? 1)
        let barWidth = max(2, 64 / barCount)
        let width = barWidth * barCount
        var svg = "<svg class=\"spark\" width=\"\(width)\" height=\"24\" viewBox=\"0 0 \(width) 24\">"
        svg += "<line x1=\"0\" x2=\"\(width)\" y1=\"23.5\" y2=\"23.5\"/>"
        for (i, events) in bars.enumerated() where events > 0 {
            let height = max(1, events * 22 / peak)
            let firstDay = range.lowerBound + Int64(i * perBar)
            let label = perBar == 1 ? Self.dayText(firstDay) : "\(Self.dayText(firstDay)) + \(perBar - 1) days"
            svg +=
                "<rect x=\"\(i * barWidth)\" y=\"\(24 - height)\" width=\"\(max(1, barWidth - 1))\" height=\"\(height)\">"
            svg += "<title>\(label): \(events)</title></rect>"
        }
        return svg + "</svg>"
    }

    // MARK: - Per day

    private func daysSection() -> String {
        let noisy = rulesByNoise.prefix(limits.rulesWithDays)
        guard !noisy.isEmpty else { return "" }
        var out = "<h2>Per day</h2>\n"
        if rulesByNoise.count > noisy.count {
            out += "<p>The \(noisy.count) noisiest rules.</p>\n"
        }
        for (rank, rule) in noisy.enumerated() {
            let days = rule.days.keys.sorted()
            out +=
                "<details\(rank == 0 ? " open" : "")><summary><code>\(HTMLText.escape(rule.id, limit: limits.nameCharacters))</code>: "
            out += "\(rule.counts.total) events on \(days.count) day\(days.count == 1 ? "" : "s")</summary>\n"
            out += "<table class=\"days\" data-rule=\"\(HTMLText.escape(rule.id))\"><thead><tr><th>Day</th>"
            out += "<th>Alerts</th><th>Reminders</th><th>Resolved</th></tr></thead><tbody>\n"
            for day in days {
                let counts = rule.days[day]!
                out += "<tr data-day=\"\(Self.dayText(day))\"><th scope=\"row\">\(Self.dayText(day))</th>"
                for kind in ReportKind.allCases { out += "<td class=\"n \(kind.name)\">\(counts[kind])</td>" }
                out += "</tr>\n"
            }
            out += "</tbody></table>\n"
            if rule.eventsOnUnkeptDays > 0 {
                out += "<p class=\"more\">\(rule.eventsOnUnkeptDays) more events fell on days after the first "
                out += "\(limits.daysPerRule) days with events.</p>\n"
            }
            out += "</details>\n"
        }
        return out
    }

    // MARK: - Charts

    private func chartsSection() -> String {
        let ordered = tracks.sorted { a, b in
            if a.value.events != b.value.events { return a.value.events > b.value.events }
            if a.value.ticks != b.value.ticks { return a.value.ticks > b.value.ticks }
            return a.key < b.key
        }
        guard !ordered.isEmpty else { return "" }
        var out = "<h2>Prices and events</h2>\n"
        out +=
            "<p class=\"legend\">"
            + ReportKind.allCases.map {
                "<svg width=\"12\" height=\"12\"><circle class=\"ev \($0.name)\" cx=\"6\" cy=\"6\" r=\"5\"/></svg> \($0.name)"
            }.joined(separator: " &nbsp; ") + "</p>\n"
        for (symbol, track) in ordered.prefix(limits.chartedSymbols) {
            out += chart(symbol: symbol, track: track)
        }
        if ordered.count > limits.chartedSymbols {
            let rest = ordered.dropFirst(limits.chartedSymbols)
            out += "<p class=\"more\">Not charted (fewer events): \(rest.count) symbols, "
            out += rest.prefix(limits.listedSilentRules).map {
                "<code>\(HTMLText.escape($0.key, limit: limits.nameCharacters))</code>"
            }
            .joined(separator: ", ")
            out += rest.count > limits.listedSilentRules ? ", …</p>\n" : ".</p>\n"
        }
        return out
    }

    private static let chartWidth = 960.0, chartHeight = 220.0
    private static let left = 84.0, right = 12.0, top = 14.0, bottom = 30.0

    private func chart(symbol: String, track: SymbolTrack) -> String {
        let line = track.line
        let markers = track.markers
        let name = HTMLText.escape(symbol, limit: limits.nameCharacters)
        var out = "<section class=\"symbol\" data-symbol=\"\(HTMLText.escape(symbol))\"><h3>\(name)</h3>"
        out += "<p>\(track.ticks) ticks, <span class=\"n events\">\(track.events)</span> events"
        if markers.count < track.events { out += " (\(markers.count) drawn; hover a marker for the others near it)" }
        out += "</p>\n"
        guard let firstPoint = line.first, let lastPoint = line.last else { return out + "</section>\n" }
        let t0 = firstPoint.time, t1 = max(lastPoint.time, firstPoint.time + 1)
        let low = line.min { $0.price < $1.price }!, high = line.max { $0.price < $1.price }!
        var p0 = low.price, p1 = high.price
        if p1 == p0 { (p0, p1) = (p0 - max(abs(p0) * 0.01, 1e-9), p1 + max(abs(p1) * 0.01, 1e-9)) }
        let pad = (p1 - p0) * 0.06
        p0 -= pad
        p1 += pad
        let plotW = Self.chartWidth - Self.left - Self.right, plotH = Self.chartHeight - Self.top - Self.bottom
        func x(_ t: Int64) -> String { Self.coordinate(Self.left + Double(t - t0) / Double(t1 - t0) * plotW) }
        func y(_ p: Double) -> String { Self.coordinate(Self.top + (p1 - p) / (p1 - p0) * plotH) }

        out += "<svg class=\"chart\" viewBox=\"0 0 \(Int(Self.chartWidth)) \(Int(Self.chartHeight))\" role=\"img\" "
        out += "aria-label=\"price of \(name)\">"
        let bottomY = Self.coordinate(Self.chartHeight - Self.bottom)
        out +=
            "<rect class=\"plot\" x=\"\(Int(Self.left))\" y=\"\(Int(Self.top))\" width=\"\(Int(plotW))\" height=\"\(Int(plotH))\"/>"
        for (point, label) in [(high, "high"), (low, "low")] {
            out += "<line class=\"grid\" x1=\"\(Int(Self.left))\" x2=\"\(Int(Self.chartWidth - Self.right))\" "
            out += "y1=\"\(y(point.price))\" y2=\"\(y(point.price))\"/>"
            out += "<text class=\"axis\" x=\"\(Int(Self.left) - 6)\" y=\"\(y(point.price))\" text-anchor=\"end\" "
            out +=
                "dominant-baseline=\"middle\">\(JSONNumber.format(point.price))<title>\(label) \(JSONNumber.format(point.price)) at "
            out += "\(Self.timeText(point.time))</title></text>"
        }
        out +=
            "<text class=\"axis\" x=\"\(Int(Self.left))\" y=\"\(Int(Self.chartHeight) - 8)\">\(Self.timeText(t0))</text>"
        out += "<text class=\"axis\" x=\"\(Int(Self.chartWidth - Self.right))\" y=\"\(Int(Self.chartHeight) - 8)\" "
        out += "text-anchor=\"end\">\(Self.timeText(lastPoint.time))</text>"
        out += "<polyline class=\"price\" points=\""
        out += line.map { "\(x($0.time)),\(y($0.price))" }.joined(separator: " ")
        out += "\"/>"
        for (marker, others) in markers {
            let cx = x(marker.point.time), cy = y(marker.point.price)
            out += "<line class=\"tick \(marker.kind.name)\" x1=\"\(cx)\" x2=\"\(cx)\" y1=\"\(cy)\" y2=\"\(bottomY)\"/>"
            out += "<circle class=\"ev \(marker.kind.name)\" cx=\"\(cx)\" cy=\"\(cy)\" r=\"4.5\"><title>"
            out +=
                "\(Self.timeText(marker.point.time)) · \(HTMLText.escape(marker.rule, limit: limits.nameCharacters)) · "
            out += "\(marker.kind.name) at \(JSONNumber.format(marker.point.price))\n"
            out += HTMLText.escape(marker.message, limit: limits.messageCharacters)
            if others > 0 { out += "\n(+\(others) more events near this one)" }
            out += "</title></circle>"
        }
        return out + "</svg></section>\n"
    }

    // MARK: - Text

    /// One decimal, without Foundation.
    static func coordinate(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        let whole = tenths / 10, fraction = abs(tenths % 10)
        return fraction == 0 ? "\(whole)" : "\(tenths < 0 && whole == 0 ? "-" : "")\(whole).\(fraction)"
    }

    /// `2023-11-14 22:13:20`
    static func timeText(_ millis: Int64) -> String {
        let text = Timestamp.format(millis)
        return String(text.prefix(19)).replacingFirst("T", with: " ")
    }

    /// Shown to the minute; the seconds are in the hover text and the `datetime` attribute.
    static func timeElement(_ millis: Int64) -> String {
        let full = timeText(millis)
        return "<time datetime=\"\(Timestamp.format(millis))\" title=\"\(full)\">\(full.prefix(16))</time>"
    }

    /// `2023-11-14` for a day number.
    static func dayText(_ day: Int64) -> String {
        String(Timestamp.format(day * 86_400_000).prefix(10))
    }

    static let style = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1140px;\
        padding:0 16px;color:#1d2329;background:#fff}
        h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dde3;padding-bottom:4px}
        h3{font-size:15px;margin:18px 0 2px}section.symbol p{margin:0 0 4px;color:#4a5561}
        dl.sources{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0 0 8px;color:#4a5561}
        dl.sources dt{font-weight:600}dl.sources dd{margin:0;word-break:break-all}
        table{border-collapse:collapse;font-variant-numeric:tabular-nums}
        table.rules{font-size:13px}th,td{padding:4px 7px;border-bottom:1px solid #e6e9ed;text-align:left;vertical-align:middle}
        thead th{font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:#5b6672;background:#f5f7f9}
        td.n,.days td{text-align:right}
        tbody th{white-space:nowrap}tr.noisiest{background:#fdecea}tr.noisiest th{color:#a3211a}
        .badge{font-size:11px;font-weight:600;color:#fff;background:#c62828;border-radius:3px;padding:1px 5px;margin-left:4px}
        .bar{display:inline-block;height:10px;background:#e57373;border-radius:2px;margin-right:6px;vertical-align:middle}
        td.total{text-align:left;white-space:nowrap;font-weight:600}
        td.first,td.last,td.busiest{white-space:nowrap;color:#4a5561}
        svg.spark rect{fill:#5c7cfa}svg.spark line{stroke:#c5ccd4}
        details{margin:6px 0}summary{cursor:pointer}table.days{margin:4px 0 8px 16px}
        svg.chart{width:100%;height:auto;display:block}
        .plot{fill:#fafbfc;stroke:#d8dde3}.grid{stroke:#d8dde3;stroke-dasharray:3 3}
        .axis{font-size:11px;fill:#5b6672}
        polyline.price{fill:none;stroke:#2f6fb3;stroke-width:1.3;stroke-linejoin:round}
        line.tick{stroke-width:1;opacity:.28}
        .ev{stroke:#fff;stroke-width:1.2}.ev:hover{stroke:#000;stroke-width:2}
        .alert{fill:#d32f2f;stroke:#d32f2f}.reminder{fill:#ef8f00;stroke:#ef8f00}.resolved{fill:#2e7d32;stroke:#2e7d32}
        circle.ev{stroke:#fff}
        .legend svg{vertical-align:middle}
        .more,.silent{color:#4a5561}
        footer{margin-top:32px;font-size:12px;color:#6b7580}
        """
}

extension ReportKind {
    var plural: String {
        switch self {
        case .alert: "alerts"
        case .reminder: "reminders"
        case .resolved: "resolved"
        }
    }
}

extension String {
    fileprivate func replacingFirst(_ target: Character, with replacement: String) -> String {
        guard let i = firstIndex(of: target) else { return self }
        return self[..<i] + replacement + self[index(after: i)...]
    }
}

import AlertTestSupport
import Foundation
import SeededRandom
import Testing

@testable import AlertEngine
@testable import AlertModel

/// `JSONString.quote` and `MessageTemplate.render` work on UTF-8 bytes (a `check` that fires
/// hundreds of alerts spends much of its time in them). These compare them, on fixed and on
/// seeded random inputs, with straightforward versions that work character by character.
@Suite struct AlertFormatTests {
    /// The straightforward version: scalar by scalar.
    static func referenceQuote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// The straightforward version: substring search for `{{` and the next `}}`, names trimmed of spaces.
    static func referenceRender(_ template: String, values: [String: String]) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstRange(of: "{{") {
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else { break }
            out += rest[..<open.lowerBound]
            var name = rest[open.upperBound..<close.lowerBound]
            while name.first == " " { name.removeFirst() }
            while name.last == " " { name.removeLast() }
            out += values[String(name)] ?? String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    static let pieces = [
        "a", "Z", " ", "\"", "\\", "\n", "\r", "\t", "\u{01}", "\u{1f}", "é", "€", "𝄞", "{", "}", "{{", "}}",
        "{{rule}}", "{{ price }}", "{{symbol", "time}}", "{{nope}}", "{{ value}}", "{{threshold }}",
        "{{condition}}", "{{{rule}}}", "{{}}"
    ]

    static func randomText(_ rng: inout SeededRandom) -> String {
        (0..<Int.random(in: 0...12, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    @Test func quoteEqualsTheCharacterByCharacterVersion() {
        for text in ["", "plain", "say \"hi\"", "back\\slash", "line\nbreak\r\t", "\u{0}\u{7}\u{1b}", "é€𝄞", "\u{7f}"] {
            #expect(JSONString.quote(text) == Self.referenceQuote(text), "\(text.debugDescription)")
        }
        var rng = SeededRandom(seed: 41)
        for _ in 0..<2_000 {
            let text = Self.randomText(&rng)
            #expect(JSONString.quote(text) == Self.referenceQuote(text), "\(text.debugDescription)")
        }
    }

    @Test func renderEqualsTheSubstringVersion() {
        let condition = "change 1h above 2"
        let values = [
            "rule": "btc-up", "symbol": "BTC-USD", "price": JSONNumber.format(43_000.5),
            "value": MessageTemplate.percent(2.345_678), "threshold": JSONNumber.format(2),
            "condition": condition, "time": Timestamp.format(1_700_000_000_000)
        ]
        func render(_ template: String) -> String {
            MessageTemplate.render(
                template, rule: "btc-up", symbol: "BTC-USD", time: 1_700_000_000_000, price: 43_000.5,
                condition: condition, threshold: .value(2), value: 2.345_678)
        }
        for template in [
            MessageTemplate.defaultTemplate, MessageTemplate.defaultChangeTemplate, "", "{{", "}}", "{{rule",
            "{{ rule }} at {{time}}: {{price}} ({{unknown}}) é{{symbol}}€", "{{{{rule}}}}"
        ] {
            #expect(render(template) == Self.referenceRender(template, values: values), "\(template.debugDescription)")
        }
        var rng = SeededRandom(seed: 42)
        for _ in 0..<2_000 {
            let template = Self.randomText(&rng)
            #expect(render(template) == Self.referenceRender(template, values: values), "\(template.debugDescription)")
        }
    }

    /// Timestamps are written digit by digit for years 0 to 9999; the interpolated version
    /// (used for other years) must agree.
    @Test func timestampsEqualTheInterpolatedVersion() {
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        func reference(_ millis: Int64) -> String {
            let (days, msOfDay) = floorDivMod(millis, 86_400_000)
            let (y, m, d) = Timestamp.civilFromDays(days)
            return
                "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(msOfDay / 3_600_000, 2)):\(pad(msOfDay / 60_000 % 60, 2))"
                + ":\(pad(msOfDay / 1000 % 60, 2)).\(pad(msOfDay % 1000, 3))Z"
        }
        #expect(Timestamp.format(1_700_000_000_000) == "2023-11-14T22:13:20.000Z")
        #expect(Timestamp.format(0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(-1) == "1969-12-31T23:59:59.999Z")
        var rng = SeededRandom(seed: 43)
        for _ in 0..<5_000 {
            let millis = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &rng) // years 1 to 9999
            #expect(Timestamp.format(millis) == reference(millis), "\(millis)")
        }
    }

    @Test func aRangeThresholdIsWrittenAsAPair() {
        let text = MessageTemplate.render(
            "{{threshold}}", rule: "r", symbol: "S", time: 0, price: 1, condition: "price inside",
            threshold: .range(1, 2.5), value: 1)
        #expect(text == "[1, 2.5]")
    }

    /// Rules v3 §6: an event of a tick with a source carries `"source"` and the source in its id;
    /// an event without one is byte for byte what it was.
    @Test func anEventWithASourceCarriesItAndOneWithoutIsUnchanged() {
        var event = Alert(
            rule: "r", symbol: "BTC/USDT", time: 1_700_000_000_000, price: 43000.5,
            condition: "volume above 1000000", threshold: .value(1e6), value: 1.9e9, message: "m", notify: [])
        #expect(
            AlertFormat.json(event)
                == #"{"id":"r:BTC/USDT:1700000000000","kind":"alert","rule":"r","symbol":"BTC/USDT","time":"2023-11-14T22:13:20.000Z","price":43000.5,"condition":"volume above 1000000","threshold":1000000,"value":1900000000,"message":"m"}"#
        )
        event.source = "binance"
        event.occurrence = 2
        #expect(
            AlertFormat.json(event)
                == #"{"id":"r:binance:BTC/USDT:1700000000000:2","kind":"alert","rule":"r","source":"binance","symbol":"BTC/USDT","time":"2023-11-14T22:13:20.000Z","price":43000.5,"condition":"volume above 1000000","threshold":1000000,"value":1900000000,"message":"m"}"#
        )
        #expect(event.id == "r:binance:BTC/USDT:1700000000000:2")
        #expect(
            TickFormat.json(Tick(time: 1, symbol: "B", price: 2, source: "ex", volume24h: 3))
                == #"{"time":1,"source":"ex","symbol":"B","price":2,"volume24h":3}"#)
        #expect(TickFormat.json(Tick(time: 1, symbol: "B", price: 2)) == #"{"time":1,"symbol":"B","price":2}"#)
    }

    /// Doubles from every corner: integers (up to and past 1e15), tiny and huge magnitudes,
    /// subnormals, negatives, -0, and the non-finite ones JSON writes as null.
    static func randomDouble(_ rng: inout SeededRandom) -> Double {
        let sign: Double = Bool.random(using: &rng) ? -1 : 1
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return sign * Double(Int64.random(in: 0...2_000_000_000_000_000, using: &rng))
        case 1: return sign * Double(Int.random(in: 0...100_000, using: &rng))
        case 2:
            return sign * Double.random(in: 0..<1, using: &rng)
                * pow(10, Double(Int.random(in: -320 ... -5, using: &rng)))
        case 3:
            return sign * Double.random(in: 1..<10, using: &rng)
                * pow(10, Double(Int.random(in: 14...308, using: &rng)))
        case 4:
            return [
                0, -0.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e15, 1e15 - 1,
                0.1, 1e-5, 43_000.5
            ][Int.random(in: 0..<12, using: &rng)]
        case 5: return sign * Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFF, using: &rng))
        default: return sign * (Double.random(in: 0.000_01...100_000, using: &rng) * 1e8).rounded() / 1e8
        }
    }

    /// The straightforward version of `JSONNumber.format`.
    static func referenceNumber(_ x: Double) -> String {
        guard x.isFinite else { return "null" }
        if x == x.rounded(), abs(x) < 1e15 { return x == 0 ? "0" : String(Int64(x)) }
        return "\(x)"
    }

    /// The straightforward version of `AlertFormat.json`: one string concatenated field by field.
    static func referenceJSON(_ a: Alert) -> String {
        func threshold(_ t: Threshold) -> String {
            switch t {
            case .value(let x): return referenceNumber(x)
            case .range(let l, let h): return "[" + referenceNumber(l) + ", " + referenceNumber(h) + "]"
            case .none: return "null"
            }
        }
        var out = "{\"id\":" + referenceQuote(a.id) + ",\"kind\":\"" + a.kind.rawValue + "\""
        if let n = a.reminder { out += ",\"reminder\":" + String(n) }
        out += ",\"rule\":" + referenceQuote(a.rule) + ",\"symbol\":" + referenceQuote(a.symbol)
        out += ",\"time\":\"" + Timestamp.format(a.time) + "\",\"price\":" + referenceNumber(a.price)
        out += ",\"condition\":" + referenceQuote(a.condition) + ",\"threshold\":" + threshold(a.threshold)
        out += ",\"value\":" + referenceNumber(a.value) + ",\"message\":" + referenceQuote(a.message) + "}"
        return out
    }

    /// What a person reads before a reminder's or a resolved event's message.
    static func referenceMarker(_ a: Alert) -> String {
        switch a.kind {
        case .alert: return ""
        case .reminder: return "reminder \(a.reminder!): "
        case .resolved: return "resolved: "
        }
    }

    static func randomAlert(_ rng: inout SeededRandom) -> Alert {
        let threshold: Threshold =
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: .value(randomDouble(&rng))
            case 1: .range(randomDouble(&rng), randomDouble(&rng))
            default: .none
            }
        let kind = [AlertKind.alert, .reminder, .resolved].randomElement(using: &rng)!
        let reminder = kind == .reminder ? Int.random(in: 1...1_000_000, using: &rng) : nil
        let rule = randomText(&rng), symbol = randomText(&rng).uppercased(), condition = randomText(&rng)
        let time = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &rng)
        let price = randomDouble(&rng), value = randomDouble(&rng)
        let conditionText = Bool.random(using: &rng) ? condition : "change 1h above " + referenceNumber(value)
        if Bool.random(using: &rng) {
            return Alert(
                rule: rule, symbol: symbol, time: time, price: price, condition: conditionText, threshold: threshold,
                value: value, message: randomText(&rng), notify: [], kind: kind, reminder: reminder)
        }
        let template = [MessageTemplate.defaultTemplate, MessageTemplate.defaultChangeTemplate, randomText(&rng)]
            .randomElement(using: &rng)!
        return Alert(
            rule: rule, symbol: symbol, time: time, price: price, condition: conditionText, threshold: threshold,
            value: value, template: template, notify: [], kind: kind, reminder: reminder)
    }

    /// Events are written into one buffer, line after line, as a listing writes them: each line
    /// must equal the concatenated version, and read back as JSON with the alert's strings.
    @Test func eventsAppendedToOneBufferEqualThePlainVersion() throws {
        var rng = SeededRandom(seed: 44)
        let alerts = (0..<3_000).map { _ in Self.randomAlert(&rng) }
        var json: [UInt8] = [], text: [UInt8] = []
        for alert in alerts {
            AlertFormat.appendJSON(alert, to: &json)
            json.append(UInt8(ascii: "\n"))
            AlertFormat.appendText(alert, to: &text)
            text.append(0) // a separator no line holds
        }
        let jsonLines = json.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
        let textLines = text.split(separator: 0, omittingEmptySubsequences: false).dropLast()
        #expect(jsonLines.count == alerts.count && textLines.count == alerts.count)
        for (alert, (line, textLine)) in zip(alerts, zip(jsonLines, textLines)) {
            let reference = Self.referenceJSON(alert)
            #expect(String(decoding: line, as: UTF8.self) == reference)
            #expect(AlertFormat.json(alert) == reference)
            // The text line escapes control characters (it stays one line); JSON has them exact.
            let referenceText =
                Timestamp.format(alert.time)
                + UserText.escapingControls(" [" + alert.rule + "] " + Self.referenceMarker(alert) + alert.message)
            #expect(String(decoding: textLine, as: UTF8.self) == referenceText)
            #expect(AlertFormat.text(alert) == referenceText)

            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            #expect(object["id"] as? String == alert.id && object["message"] as? String == alert.message)
            #expect(object["rule"] as? String == alert.rule && object["condition"] as? String == alert.condition)
            // Numbers as JSON numbers or null (that their text reads back exactly is
            // `numbersReadBackAsTheSameDouble`: Foundation's reader rounds some digits off).
            for (key, x) in [("price", alert.price), ("value", alert.value)] {
                #expect(x.isFinite ? object[key] is NSNumber : object[key] is NSNull, "\(key) \(x)")
            }
        }
    }

    /// The encoder writes into room it reserves from the event's length: texts that are long and
    /// all escapes, templates of nothing but placeholders, the longest numbers and times of
    /// years far from ours still come out as the plain version writes them.
    @Test func longAndEscapeHeavyEventsEqualThePlainVersion() {
        let controls = String(repeating: "\u{01}\"\\", count: 200)
        let templates = [
            String(repeating: "{{rule}}", count: 300),
            String(repeating: "{{time}}{{threshold}}{{value}}{{price}}", count: 60),
            controls, String(repeating: "{{ condition }}\u{1f}", count: 100), "{{symbol}}" + controls + "{{rule}}"
        ]
        var json: [UInt8] = []
        for template in templates {
            for rule in ["", controls, "r"] {
                for time in [Int64.min / 2, -1, 1_700_000_000_000, Int64.max / 2] {
                    let alert = Alert(
                        rule: rule, symbol: controls, time: time, price: -2.2250738585072014e-308,
                        condition: "change " + controls,
                        threshold: .range(-2.2250738585072014e-308, -.greatestFiniteMagnitude),
                        value: -1.2345678901234567e-300, template: template, notify: [], kind: .reminder,
                        reminder: Int.min)
                    json.removeAll()
                    AlertFormat.appendJSON(alert, to: &json)
                    #expect(String(decoding: json, as: UTF8.self) == Self.referenceJSON(alert))
                    // The text line escapes control characters (it stays one line); JSON has them exact.
                    #expect(
                        AlertFormat.text(alert)
                            == Timestamp.format(alert.time)
                            + UserText.escapingControls(" [" + alert.rule + "] reminder \(Int.min): " + alert.message))
                }
            }
        }
    }

    /// Numbers appended to a buffer read back as the same double, in JSON's number grammar.
    @Test func numbersReadBackAsTheSameDouble() {
        var rng = SeededRandom(seed: 45)
        for _ in 0..<20_000 {
            let x = Self.randomDouble(&rng)
            var out = Array("[".utf8)
            JSONNumber.append(x, to: &out)
            let text = String(decoding: out.dropFirst(), as: UTF8.self)
            #expect(text == Self.referenceNumber(x) && text == JSONNumber.format(x))
            if x.isFinite {
                #expect(Double(text) == x, "\(x): \(text)")
                #expect(text.wholeMatch(of: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/) != nil, "\(text)")
            }
        }
    }
}

/// The text listing is one line per alert, whatever a feed's symbol or a rule's text holds:
/// control characters, line separators and bidirectional overrides are escaped, the rest kept.
@Suite struct AlertTextLineTests {
    @Test func controlCharactersCannotSplitOrForgeALine() {
        let forged = "BTC\n2023-11-14T22:13:20.000Z [btc] BTC price above 1\r\u{0}\u{85}\u{2028}\u{202E}"
        let alert = Alert(
            rule: "r\u{1B}[31m", symbol: forged, time: 1_700_000_000_000, price: 2, condition: "price above 1",
            threshold: .value(1), value: 2, template: MessageTemplate.defaultTemplate, notify: [])
        let line = AlertFormat.text(alert)
        #expect(
            line
                == #"2023-11-14T22:13:20.000Z [r\u001b[31m] BTC\n2023-11-14T22:13:20.000Z [btc] BTC price above 1\r\u0000\u0085\u2028\u202e price above 1 (price 2)"#
        )
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    }

    @Test func plainTextIsKeptAsItIs() {
        let alert = Alert(
            rule: "btc-€", symbol: "BTC…", time: 1_700_000_000_000, price: 2, condition: "price above 1",
            threshold: .value(1), value: 2, message: #"BTC up 5% \o/ “quoted” 日本"#, notify: [])
        #expect(AlertFormat.text(alert) == #"2023-11-14T22:13:20.000Z [btc-€] BTC up 5% \o/ “quoted” 日本"#)
    }
}

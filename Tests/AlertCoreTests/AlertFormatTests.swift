@testable import AlertCore
import AlertTestSupport
import Testing
import SeededRandom

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

    static let pieces = ["a", "Z", " ", "\"", "\\", "\n", "\r", "\t", "\u{01}", "\u{1f}", "é", "€", "𝄞", "{", "}", "{{", "}}",
                         "{{rule}}", "{{ price }}", "{{symbol", "time}}", "{{nope}}", "{{ value}}", "{{threshold }}",
                         "{{condition}}", "{{{rule}}}", "{{}}"]

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
        let values = ["rule": "btc-up", "symbol": "BTC-USD", "price": JSONNumber.format(43_000.5),
                      "value": MessageTemplate.percent(2.345_678), "threshold": JSONNumber.format(2),
                      "condition": condition, "time": Timestamp.format(1_700_000_000_000)]
        func render(_ template: String) -> String {
            MessageTemplate.render(template, rule: "btc-up", symbol: "BTC-USD", time: 1_700_000_000_000, price: 43_000.5,
                                   condition: condition, threshold: .value(2), value: 2.345_678)
        }
        for template in [MessageTemplate.defaultTemplate, MessageTemplate.defaultChangeTemplate, "", "{{", "}}", "{{rule",
                         "{{ rule }} at {{time}}: {{price}} ({{unknown}}) é{{symbol}}€", "{{{{rule}}}}"] {
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
            return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(msOfDay / 3_600_000, 2)):\(pad(msOfDay / 60_000 % 60, 2))"
                + ":\(pad(msOfDay / 1000 % 60, 2)).\(pad(msOfDay % 1000, 3))Z"
        }
        #expect(Timestamp.format(1_700_000_000_000) == "2023-11-14T22:13:20.000Z")
        #expect(Timestamp.format(0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(-1) == "1969-12-31T23:59:59.999Z")
        var rng = SeededRandom(seed: 43)
        for _ in 0..<5_000 {
            let millis = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &rng)  // years 1 to 9999
            #expect(Timestamp.format(millis) == reference(millis), "\(millis)")
        }
    }

    @Test func aRangeThresholdIsWrittenAsAPair() {
        let text = MessageTemplate.render("{{threshold}}", rule: "r", symbol: "S", time: 0, price: 1, condition: "price inside",
                                          threshold: .range(1, 2.5), value: 1)
        #expect(text == "[1, 2.5]")
    }
}

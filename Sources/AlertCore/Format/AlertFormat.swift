/// The two renderings of an alert: the alert event's JSON object (one line,
/// Docs/rules.md#the-alert-event) and a readable text line.
public enum AlertFormat {
    /// `{"id":…,"kind":…[,"reminder":n],"rule":…,"symbol":…,"time":…,"price":…,"condition":…,"threshold":…,"value":…,"message":…}`
    /// with keys in the order Docs/rules.md#the-alert-event shows, no trailing newline.
    public static func json(_ alert: Alert) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        appendJSON(alert, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `json(alert)`'s bytes to `out`: a caller that lists many alerts reuses one
    /// buffer instead of making a string for each field and each line.
    public static func appendJSON(_ alert: Alert, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"id":""#.utf8)
        // `Alert.id`'s parts: ':', digits and `resolved` need no escape.
        JSONString.appendEscaped(alert.rule, to: &out)
        out.append(UInt8(ascii: ":"))
        JSONString.appendEscaped(alert.symbol, to: &out)
        out.append(UInt8(ascii: ":"))
        out.append(contentsOf: String(alert.time).utf8)
        if alert.kind == .resolved { out.append(contentsOf: ":resolved".utf8) }
        out.append(contentsOf: #"","kind":""#.utf8)
        out.append(contentsOf: alert.kind.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
        if let n = alert.reminder {
            out.append(contentsOf: #","reminder":"#.utf8)
            out.append(contentsOf: String(n).utf8)
        }
        out.append(contentsOf: #","rule":"#.utf8)
        JSONString.append(alert.rule, to: &out)
        out.append(contentsOf: #","symbol":"#.utf8)
        JSONString.append(alert.symbol, to: &out)
        out.append(contentsOf: #","time":""#.utf8)
        Timestamp.append(alert.time, to: &out)  // digits, '-', ':', '.', 'T', 'Z': nothing to escape
        out.append(contentsOf: #"","price":"#.utf8)
        JSONNumber.append(alert.price, to: &out)
        out.append(contentsOf: #","condition":"#.utf8)
        JSONString.append(alert.condition, to: &out)
        out.append(contentsOf: #","threshold":"#.utf8)
        appendThresholdJSON(alert.threshold, to: &out)
        out.append(contentsOf: #","value":"#.utf8)
        JSONNumber.append(alert.value, to: &out)
        out.append(contentsOf: #","message":""#.utf8)
        let message = out.count
        alert.appendMessage(to: &out)
        JSONString.escapeTail(of: &out, from: message)
        out.append(contentsOf: #""}"#.utf8)
    }

    /// `2023-11-14T22:13:20.000Z [btc-100k] MESSAGE`: the time, the rule, and the message,
    /// which by default says the symbol, the condition and the price.
    public static func text(_ alert: Alert) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        appendText(alert, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text(alert)`'s bytes to `out`.
    public static func appendText(_ alert: Alert, to out: inout [UInt8]) {
        Timestamp.append(alert.time, to: &out)
        out.append(contentsOf: " [".utf8)
        out.append(contentsOf: alert.rule.utf8)
        out.append(contentsOf: "] ".utf8)
        alert.appendMessage(to: &out)
    }

    public static func thresholdJSON(_ threshold: Threshold) -> String {
        var out: [UInt8] = []
        appendThresholdJSON(threshold, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `thresholdJSON(threshold)`'s bytes to `out`.
    public static func appendThresholdJSON(_ threshold: Threshold, to out: inout [UInt8]) {
        switch threshold {
        case .value(let x):
            JSONNumber.append(x, to: &out)
        case .range(let l, let h):
            out.append(UInt8(ascii: "["))
            JSONNumber.append(l, to: &out)
            out.append(contentsOf: ", ".utf8)
            JSONNumber.append(h, to: &out)
            out.append(UInt8(ascii: "]"))
        case .none:
            out.append(contentsOf: "null".utf8)
        }
    }
}

/// `message` templates (Docs/rules.md#messages): `{{rule}} {{symbol}} {{price}} {{value}} {{threshold}}
/// {{condition}} {{time}}`. Placeholders may have spaces inside the braces (`{{ price }}`).
public enum MessageTemplate {
    public static let placeholders: Set<String> = ["rule", "symbol", "price", "value", "threshold", "condition", "time"]

    /// The message a price rule without `message` gets.
    public static let defaultTemplate = "{{symbol}} {{condition}} (price {{price}})"
    /// The message a change rule without `message` gets: it also says by how much it moved.
    public static let defaultChangeTemplate = "{{symbol}} {{condition}}: {{value}}% (price {{price}})"

    public static func defaultTemplate(for condition: Condition) -> String {
        switch condition {
        case .change, .fromHigh, .fromLow, .pnl, .move(.percent): return defaultChangeTemplate
        default: return defaultTemplate
        }
    }

    /// Whether an alert's `value` is a percentage, judged by its condition text (see
    /// `Condition.summary`): change, fromHigh, fromLow, pnl and percent moves.
    static func isPercent(condition: String) -> Bool {
        condition.hasPrefix("change ") || condition.hasPrefix("fromHigh ") || condition.hasPrefix("fromLow ")
            || condition.hasPrefix("pnl ") || condition.hasPrefix("move percent ")
    }

    /// Names used in `template` that are not placeholders, with their offsets in characters,
    /// so a validator can point at them.
    public static func unknownPlaceholders(in template: String) -> [(name: String, offset: Int)] {
        var result: [(String, Int)] = []
        forEachPlaceholder(in: template) { name, offset in
            if !placeholders.contains(name) { result.append((name, offset)) }
        }
        return result
    }

    /// Fills `template` for `alert` (its `message` is ignored).
    public static func render(_ template: String, rule: String, symbol: String, time: Int64, price: Double,
                              condition: String, threshold: Threshold, value: Double) -> String {
        var out: [UInt8] = []
        render(template, rule: rule, symbol: symbol, time: time, price: price, condition: condition,
               threshold: threshold, value: value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `render(…)`'s bytes to `out`.
    public static func render(_ template: String, rule: String, symbol: String, time: Int64, price: Double,
                              condition: String, threshold: Threshold, value: Double, to out: inout [UInt8]) {
        // On UTF-8 bytes: `{{` and `}}` are ASCII, so every cut is at a character boundary.
        var template = template
        template.withUTF8 { bytes in
            out.reserveCapacity(out.count + bytes.count + 32)
            var i = 0
            var literal = 0
            while i + 1 < bytes.count {
                guard bytes[i] == UInt8(ascii: "{"), bytes[i + 1] == UInt8(ascii: "{") else {
                    i += 1
                    continue
                }
                var close = i + 2
                while close + 1 < bytes.count, !(bytes[close] == UInt8(ascii: "}") && bytes[close + 1] == UInt8(ascii: "}")) {
                    close += 1
                }
                guard close + 1 < bytes.count else { break }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[literal..<i]))
                var nameStart = i + 2, nameEnd = close
                while nameStart < nameEnd, bytes[nameStart] == UInt8(ascii: " ") { nameStart += 1 }
                while nameEnd > nameStart, bytes[nameEnd - 1] == UInt8(ascii: " ") { nameEnd -= 1 }
                let name = bytes[nameStart..<nameEnd]
                if name.elementsEqual("rule".utf8) {
                    out.append(contentsOf: rule.utf8)
                } else if name.elementsEqual("symbol".utf8) {
                    out.append(contentsOf: symbol.utf8)
                } else if name.elementsEqual("price".utf8) {
                    JSONNumber.append(price, to: &out)
                } else if name.elementsEqual("value".utf8) {
                    out.append(contentsOf: (isPercent(condition: condition) ? percent(value) : JSONNumber.format(value)).utf8)
                } else if name.elementsEqual("threshold".utf8) {
                    AlertFormat.appendThresholdJSON(threshold, to: &out)
                } else if name.elementsEqual("condition".utf8) {
                    out.append(contentsOf: condition.utf8)
                } else if name.elementsEqual("time".utf8) {
                    Timestamp.append(time, to: &out)
                } else {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<(close + 2)]))
                }
                i = close + 2
                literal = i
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[literal...]))
        }
    }

    /// Change values read as percent with two decimals in messages (`-5.23`); the event's
    /// `value` field keeps every digit (see `isPercent`).
    public static func percent(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e13 else { return JSONNumber.format(value) }
        return JSONNumber.format((value * 100).rounded() / 100)
    }

    static func forEachPlaceholder(in template: String, _ body: (String, Int) -> Void) {
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            guard let close = rest[open.upperBound...].range(of: "}}") else { return }
            let offset = template.distance(from: template.startIndex, to: open.lowerBound)
            body(String(rest[open.upperBound..<close.lowerBound].trimmingSpaces()), offset)
            rest = rest[close.upperBound...]
        }
    }
}

extension StringProtocol {
    func trimmingSpaces() -> Substring {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }

    /// Substring search without Foundation.
    func range(of needle: String) -> Range<Index>? {
        let n = Array(needle.utf8)
        guard let first = n.first else { return nil }
        var i = startIndex
        while i < endIndex {
            if utf8[i] == first {
                var j = i
                var k = 0
                while k < n.count, j < endIndex, utf8[j] == n[k] {
                    j = utf8.index(after: j)
                    k += 1
                }
                if k == n.count { return i..<j }
            }
            i = index(after: i)
        }
        return nil
    }
}

/// A tick as one JSON line of a tick file (Docs/rules.md#ticks), the form `record` writes and
/// `replay` reads.
public enum TickFormat {
    public static func json(_ tick: Tick) -> String {
        var out = "{\"time\":\(tick.time),\"symbol\":\(JSONString.quote(tick.symbol)),\"price\":\(JSONNumber.format(tick.price))"
        if let change = tick.change24h, change.isFinite { out += ",\"change24h\":\(JSONNumber.format(change))" }
        return out + "}"
    }
}

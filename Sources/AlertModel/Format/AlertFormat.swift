/// The two renderings of an alert: the alert event's JSON object (one line,
/// Docs/rules.md#the-alert-event) and a readable text line.
public enum AlertFormat {
    /// `{"id":…,"kind":…[,"reminder":n],"rule":…[,"source":…],"symbol":…,"time":…,"price":…,"condition":…,"threshold":…,"value":…,"message":…}`
    /// with keys in the order Docs/rules.md#the-alert-event shows, no trailing newline; `source`
    /// only for an event of a tick with a source (rules v3 §6), so other events are as before.
    public static func json(_ alert: Alert) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        appendJSON(alert, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `json(alert)`'s bytes to `out`: a caller that lists many alerts reuses one
    /// buffer instead of making a string for each field and each line. Only the strings a rule
    /// or a tick brings (rule, symbol, condition, message) are checked for escapes; the keys,
    /// numbers and times never need one.
    public static func appendJSON(_ alert: Alert, to out: inout [UInt8]) {
        let rule = alert.rule.utf8.count, symbol = alert.symbol.utf8.count, condition = alert.condition.utf8.count
        // The keys, the punctuation, the kind, the numbers and the time take at most 344 bytes;
        // the rule, the source and the symbol appear twice, each byte escaped in at most 6.
        var maxLength = 384 + 12 * rule + 12 * symbol + 6 * condition
        if let source = alert.source { maxLength += 16 + 12 * source.utf8.count }
        switch alert.messageSource {
        case .text(let text): maxLength += 6 * text.utf8.count
        case .template(let template):
            maxLength += MessageTemplate.maxLength(template, longestText: max(rule, symbol, condition), escaped: true)
        }
        out.write(atMost: maxLength) { out in
            out.literal(#"{"id":""#)
            // `Alert.id`'s parts: ':', digits and `resolved` need no escape.
            out.escaped(alert.rule)
            out.byte(UInt8(ascii: ":"))
            if let source = alert.source {
                out.escaped(source)
                out.byte(UInt8(ascii: ":"))
            }
            out.escaped(alert.symbol)
            out.byte(UInt8(ascii: ":"))
            out.decimal(alert.time)
            if alert.kind == .resolved { out.literal(":resolved") }
            if alert.occurrence > 1 {
                out.byte(UInt8(ascii: ":"))
                out.decimal(Int64(alert.occurrence))
            }
            switch alert.kind {
            case .alert: out.literal(#"","kind":"alert""#)
            case .reminder: out.literal(#"","kind":"reminder""#)
            case .resolved: out.literal(#"","kind":"resolved""#)
            }
            if let n = alert.reminder {
                out.literal(#","reminder":"#)
                out.decimal(Int64(n))
            }
            out.literal(#","rule":""#)
            out.escaped(alert.rule)
            if let source = alert.source {
                out.literal(#"","source":""#)
                out.escaped(source)
            }
            out.literal(#"","symbol":""#)
            out.escaped(alert.symbol)
            out.literal(#"","time":""#)
            Timestamp.write(alert.time, to: &out) // digits, '-', ':', '.', 'T', 'Z': nothing to escape
            out.literal(#"","price":"#)
            let price = NumberText(alert.price)
            out.number(price)
            out.literal(#","condition":""#)
            out.escaped(alert.condition)
            out.literal(#"","threshold":"#)
            writeThresholdJSON(alert.threshold, to: &out)
            out.literal(#","value":"#)
            out.number(NumberText(alert.value))
            out.literal(#","message":""#)
            switch alert.messageSource {
            case .text(let text):
                out.escaped(text)
            case .template(let template):
                MessageTemplate.render(template, alert, price: price, escaped: true, to: &out)
            }
            out.literal(#""}"#)
        }
    }

    /// `2023-11-14T22:13:20.000Z [btc-100k] MESSAGE`: the time, the rule, and the message as a
    /// person reads it (`said`: marked `resolved: ` or `reminder N: `), which by default says the symbol, the condition and the price. Always one line: control
    /// characters (and line separators, bidirectional overrides) the rule, the message or a
    /// symbol hold are escaped as `UserText` does, so no text can split or forge a line.
    public static func text(_ alert: Alert) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        appendText(alert, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text(alert)`'s bytes to `out`.
    public static func appendText(_ alert: Alert, to out: inout [UInt8]) {
        Timestamp.append(alert.time, to: &out)
        let start = out.count
        out.appendLiteral(" [")
        out.appendUTF8(alert.rule)
        out.appendLiteral("] ")
        appendSaid(alert, to: &out)
        UserText.escapeControls(in: &out, from: start)
    }

    /// The message as a person reads it: a resolved event says `resolved: MESSAGE` and a
    /// reminder `reminder N: MESSAGE`, so neither reads like a new alert (the message itself
    /// describes the condition that fired); an alert says just `MESSAGE`.
    public static func said(_ alert: Alert) -> String {
        var out: [UInt8] = []
        appendSaid(alert, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `said(alert)`'s bytes to `out`.
    public static func appendSaid(_ alert: Alert, to out: inout [UInt8]) {
        out.append(contentsOf: marker(alert).utf8)
        alert.appendMessage(to: &out)
    }

    /// `resolved: `, `reminder N: ` or nothing: what `said` puts before the message.
    public static func marker(_ alert: Alert) -> String {
        switch alert.kind {
        case .alert: return ""
        case .resolved: return "resolved: "
        case .reminder: return alert.reminder.map { "reminder \($0): " } ?? "reminder: "
        }
    }

    public static func thresholdJSON(_ threshold: Threshold) -> String {
        var out: [UInt8] = []
        appendThresholdJSON(threshold, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `thresholdJSON(threshold)`'s bytes to `out`.
    public static func appendThresholdJSON(_ threshold: Threshold, to out: inout [UInt8]) {
        out.write(atMost: maxThresholdLength) { writeThresholdJSON(threshold, to: &$0) }
    }

    /// The longest `thresholdJSON`: a pair of numbers.
    static let maxThresholdLength = 2 * NumberText.capacity + 4

    static func writeThresholdJSON(_ threshold: Threshold, to out: inout ReservedWriter) {
        switch threshold {
        case .value(let x):
            out.number(NumberText(x))
        case .range(let l, let h):
            out.byte(UInt8(ascii: "["))
            out.number(NumberText(l))
            out.literal(", ")
            out.number(NumberText(h))
            out.byte(UInt8(ascii: "]"))
        case .none:
            out.literal("null")
        }
    }
}

/// `message` templates (Docs/rules.md#messages): `{{rule}} {{symbol}} {{price}} {{value}} {{threshold}}
/// {{condition}} {{time}} {{kind}} {{reminder}}`. Placeholders may have spaces inside the braces
/// (`{{ price }}`). `kind` is `alert`, `reminder` or `resolved`; `reminder` the reminder's number,
/// 0 for the other kinds.
public enum MessageTemplate {
    public static let placeholders: Set<String> = [
        "rule", "symbol", "price", "value", "threshold", "condition", "time",
        "kind", "reminder"
    ]

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
        var condition = condition
        return condition.withUTF8 { text in
            func starts(_ prefix: StaticString) -> Bool {
                prefix.utf8CodeUnitCount <= text.count
                    && text.prefix(prefix.utf8CodeUnitCount).elementsEqual(
                        UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
            }
            return starts("change ") || starts("fromHigh ") || starts("fromLow ") || starts("pnl ")
                || starts("move percent ")
        }
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
    public static func render(
        _ template: String, rule: String, symbol: String, time: Int64, price: Double,
        condition: String, threshold: Threshold, value: Double,
        kind: AlertKind = .alert, reminder: Int? = nil
    ) -> String {
        var out: [UInt8] = []
        render(
            template, rule: rule, symbol: symbol, time: time, price: price, condition: condition,
            threshold: threshold, value: value, kind: kind, reminder: reminder, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Fills `template` with `alert`'s fields, its kind and reminder number included.
    public static func render(_ template: String, _ alert: Alert) -> String {
        render(
            template, rule: alert.rule, symbol: alert.symbol, time: alert.time, price: alert.price,
            condition: alert.condition, threshold: alert.threshold, value: alert.value,
            kind: alert.kind, reminder: alert.reminder)
    }

    /// Appends `render(…)`'s bytes to `out`.
    public static func render(
        _ template: String, rule: String, symbol: String, time: Int64, price: Double,
        condition: String, threshold: Threshold, value: Double,
        kind: AlertKind = .alert, reminder: Int? = nil, to out: inout [UInt8]
    ) {
        let longest = max(rule.utf8.count, symbol.utf8.count, condition.utf8.count)
        out.write(atMost: maxLength(template, longestText: longest, escaped: false)) { out in
            render(
                template, rule: rule, symbol: symbol, time: time, price: NumberText(price), condition: condition,
                threshold: threshold, value: value, kind: kind, reminder: reminder, escaped: false, to: &out)
        }
    }

    /// The most bytes `template` renders to when the longest of the rule, the symbol and the
    /// condition has `longestText` bytes. A known placeholder takes at least 8 bytes of the
    /// template (`{{rule}}`) and becomes one of those texts, a number (at most 32 bytes), a
    /// threshold (at most 68), a time (at most 40), a kind (at most 8) or a reminder number (at
    /// most 20); everything else is copied. `escaped`: every
    /// byte of text may become 6.
    static func maxLength(_ template: String, longestText: Int, escaped: Bool) -> Int {
        let scale = escaped ? 6 : 1
        let bytes = template.utf8.count
        let field = max(scale * longestText, AlertFormat.maxThresholdLength, Timestamp.maxLength)
        return scale * bytes + bytes / 8 * field
    }

    /// Writes the message `template` makes for `alert`, with `price` already formatted;
    /// `escaped`: as the inside of a JSON string. At most `maxLength(…)` bytes.
    static func render(
        _ template: String, _ alert: Alert, price: NumberText, escaped: Bool, to out: inout ReservedWriter
    ) {
        render(
            template, rule: alert.rule, symbol: alert.symbol, time: alert.time, price: price,
            condition: alert.condition, threshold: alert.threshold, value: alert.value,
            kind: alert.kind, reminder: alert.reminder, escaped: escaped, to: &out)
    }

    private static func render(
        _ template: String, rule: String, symbol: String, time: Int64, price: NumberText,
        condition: String, threshold: Threshold, value: Double, kind: AlertKind, reminder: Int?,
        escaped: Bool, to out: inout ReservedWriter
    ) {
        // What the template and the rule's strings bring may need escapes; numbers and times never do.
        func text(_ bytes: UnsafeBufferPointer<UInt8>) {
            if escaped { out.escaped(bytes) } else { out.bytes(bytes) }
        }
        func text(_ string: String) {
            if escaped { out.escaped(string) } else { out.utf8(string) }
        }
        // On UTF-8 bytes: `{{` and `}}` are ASCII, so every cut is at a character boundary.
        var template = template
        template.withUTF8 { bytes in
            var i = 0
            var literal = 0
            while i + 1 < bytes.count {
                guard bytes[i] == UInt8(ascii: "{"), bytes[i + 1] == UInt8(ascii: "{") else {
                    i += 1
                    continue
                }
                var close = i + 2
                while close + 1 < bytes.count,
                    !(bytes[close] == UInt8(ascii: "}") && bytes[close + 1] == UInt8(ascii: "}"))
                {
                    close += 1
                }
                guard close + 1 < bytes.count else { break }
                text(UnsafeBufferPointer(rebasing: bytes[literal..<i]))
                var nameStart = i + 2, nameEnd = close
                while nameStart < nameEnd, bytes[nameStart] == UInt8(ascii: " ") { nameStart += 1 }
                while nameEnd > nameStart, bytes[nameEnd - 1] == UInt8(ascii: " ") { nameEnd -= 1 }
                switch Placeholder(UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd])) {
                case .rule: text(rule)
                case .symbol: text(symbol)
                case .price: out.number(price)
                case .value: out.number(isPercent(condition: condition) ? percentText(value) : NumberText(value))
                case .threshold: AlertFormat.writeThresholdJSON(threshold, to: &out)
                case .condition: text(condition)
                case .time: Timestamp.write(time, to: &out)
                case .kind: out.utf8(kind.rawValue) // ASCII letters: nothing to escape
                case .reminder: out.decimal(Int64(reminder ?? 0))
                case nil: text(UnsafeBufferPointer(rebasing: bytes[i..<(close + 2)]))
                }
                i = close + 2
                literal = i
            }
            text(UnsafeBufferPointer(rebasing: bytes[literal...]))
        }
    }

    /// A name of `placeholders`, matched on its UTF-8 bytes.
    private enum Placeholder {
        case rule, symbol, price, value, threshold, condition, time, kind, reminder

        init?(_ name: UnsafeBufferPointer<UInt8>) {
            func equals(_ text: StaticString) -> Bool {
                text.utf8CodeUnitCount == name.count
                    && name.elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: name.count))
            }
            switch name.first {
            case UInt8(ascii: "r") where equals("rule"): self = .rule
            case UInt8(ascii: "r") where equals("reminder"): self = .reminder
            case UInt8(ascii: "k") where equals("kind"): self = .kind
            case UInt8(ascii: "s") where equals("symbol"): self = .symbol
            case UInt8(ascii: "p") where equals("price"): self = .price
            case UInt8(ascii: "v") where equals("value"): self = .value
            case UInt8(ascii: "t") where equals("threshold"): self = .threshold
            case UInt8(ascii: "t") where equals("time"): self = .time
            case UInt8(ascii: "c") where equals("condition"): self = .condition
            default: return nil
            }
        }
    }

    /// Change values read as percent with two decimals in messages (`-5.23`); the event's
    /// `value` field keeps every digit (see `isPercent`).
    public static func percent(_ value: Double) -> String {
        var out: [UInt8] = []
        appendPercent(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `percent(value)`'s bytes to `out`.
    static func appendPercent(_ value: Double, to out: inout [UInt8]) {
        percentText(value).append(to: &out)
    }

    static func percentText(_ value: Double) -> NumberText {
        guard value.isFinite, abs(value) < 1e13 else { return NumberText(value) }
        return NumberText((value * 100).rounded() / 100)
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
    /// The tick as one tick-file line (Docs/rules.md#ticks), which `TickLineParser` reads back
    /// as the same tick: `source` and `volume24h` (rules v3 §1) only when the tick has them.
    public static func json(_ tick: Tick) -> String {
        var out = "{\"time\":\(tick.time),"
        if let source = tick.source { out += "\"source\":\(JSONString.quote(source))," }
        out += "\"symbol\":\(JSONString.quote(tick.symbol)),\"price\":\(JSONNumber.format(tick.price))"
        if let change = tick.change24h, change.isFinite { out += ",\"change24h\":\(JSONNumber.format(change))" }
        if let volume = tick.volume24h, volume.isFinite { out += ",\"volume24h\":\(JSONNumber.format(volume))" }
        return out + "}"
    }
}

import JSONTokens

/// The keys and values of a rule in its most common shape, read straight from the file's bytes:
/// `id`, `symbol`, `when` with one `price` operator or a `change`, and the version 1 settings
/// `notify`, `cooldown`, `repeat` (a string), `hysteresis`, `message` and `enabled`, each once;
/// strings of ASCII without escapes. Anything else (another key, a duplicate, an escape, a value
/// of another type, any syntax error) makes the scan give up, and the rule is then read and
/// checked in full by `JSONReader` and `FileChecker.rule`, which report what is wrong. A scan
/// that succeeds has read valid JSON, so the two readings agree on it.
struct PlainRule {
    var id: JSONNode?
    var symbol: JSONMember?
    /// `{"price": {OP: X}}`: OP and X; for `inside`/`outside`, X is the low bound.
    var price: PlainKey?
    var threshold = PlainNumber()
    /// The high bound of `inside`/`outside`.
    var high: PlainNumber?
    /// `{"change": {"window": W, "above"|"below": C}}`: W, and `above` or `below` (C is `threshold`).
    var window: JSONNode?
    var side: PlainKey?
    var notify: JSONMember?
    var cooldown: JSONMember?
    var repeatMode: JSONMember?
    var hysteresis: JSONMember?
    var message: JSONNode?
    var enabled: JSONNode?
}

/// A number as `FileChecker.number` reads it: nil when it is not a finite Double.
struct PlainNumber {
    var value: Double?
}

/// The keys a plain rule is written with.
enum PlainKey: String {
    case id, symbol, when, notify, cooldown, hysteresis, message, enabled
    case price, change, window, above, below, crossesAbove, crossesBelow, inside, outside
    case `repeat`
}

/// Scans one rule object at `index` (see `PlainRule`) on the one tokenizer, `JSONTokenizer`,
/// without building the syntax tree that makes the general reader and checker cost several
/// microseconds a rule; every method returns nil (or false) as soon as the text is not of that
/// shape.
struct PlainRuleScanner {
    var tokens: JSONTokenizer

    init(bytes: UnsafeBufferPointer<UInt8>, index: Int) {
        tokens = JSONTokenizer(bytes, offset: index, strict: true)
    }

    /// Just past what was read.
    var index: Int { tokens.offset }

    private static let quote = UInt8(ascii: "\"")

    /// Reads the rule at `index` into `rule`, leaving `index` just past it; false when it is
    /// not of the plain shape.
    mutating func rule(_ rule: inout PlainRule) -> Bool {
        var when = false
        let read = members { scanner, key, keyAt in
            let member = { (value: JSONNode?) in
                value.map { JSONMember(key: key.rawValue, keyPosition: keyAt, value: $0) }
            }
            // A key already read is a duplicate: the full read reports it.
            switch key {
            case .id where rule.id == nil:
                rule.id = scanner.string()
                return rule.id != nil
            case .symbol where rule.symbol == nil:
                // A qualified symbol (`source:SYMBOL`, version 3) names a source the full check
                // looks up.
                rule.symbol = member(scanner.string(allowingColon: false))
                return rule.symbol != nil
            case .when where !when:
                when = true
                return scanner.when(&rule)
            case .notify where rule.notify == nil:
                rule.notify = member(scanner.stringArray())
                return rule.notify != nil
            case .cooldown where rule.cooldown == nil:
                rule.cooldown = member(scanner.string())
                return rule.cooldown != nil
            case .repeat where rule.repeatMode == nil:
                rule.repeatMode = member(scanner.string())
                return rule.repeatMode != nil
            case .hysteresis where rule.hysteresis == nil:
                rule.hysteresis = member(scanner.numberNode())
                return rule.hysteresis != nil
            case .message where rule.message == nil:
                rule.message = scanner.string()
                return rule.message != nil
            case .enabled where rule.enabled == nil:
                rule.enabled = scanner.bool()
                return rule.enabled != nil
            default: return false
            }
        }
        return read && rule.id != nil && rule.symbol != nil && when
    }

    /// `{"price": {OP: …}}` or `{"change": {…}}`.
    private mutating func when(_ rule: inout PlainRule) -> Bool {
        var count = 0
        let read = members { scanner, key, _ in
            count += 1
            switch key {
            case .price: return count == 1 && scanner.price(&rule)
            case .change: return count == 1 && scanner.change(&rule)
            default: return false
            }
        }
        return read && count == 1
    }

    /// `{OP: X}` or `{"inside"|"outside": [L, H]}`.
    private mutating func price(_ rule: inout PlainRule) -> Bool {
        var count = 0
        let read = members { scanner, key, _ in
            count += 1
            guard count == 1 else { return false }
            switch key {
            case .above, .below, .crossesAbove, .crossesBelow:
                guard let value = scanner.number() else { return false }
                rule.threshold = value
            case .inside, .outside:
                guard scanner.skipping(UInt8(ascii: "[")), let low = scanner.number(),
                    scanner.skipping(UInt8(ascii: ",")), let high = scanner.number(),
                    scanner.skipping(UInt8(ascii: "]"))
                else { return false }
                rule.threshold = low
                rule.high = high
            default:
                return false
            }
            rule.price = key
            return true
        }
        return read && count == 1
    }

    /// `{"window": W, "above"|"below": C}`, in either order.
    private mutating func change(_ rule: inout PlainRule) -> Bool {
        let read = members { scanner, key, _ in
            switch key {
            case .window:
                guard rule.window == nil else { return false }
                rule.window = scanner.string()
                return rule.window != nil
            case .above, .below:
                guard rule.side == nil, let value = scanner.number() else { return false }
                rule.side = key
                rule.threshold = value
                return true
            default:
                return false
            }
        }
        return read && rule.window != nil && rule.side != nil
    }

    /// Reads an object's members, handing each key (one of `PlainKey`) and its place to `body`,
    /// which reads the value and says whether to go on. False when the text is not an object of
    /// such keys or `body` said no.
    private mutating func members(_ body: (inout PlainRuleScanner, PlainKey, SourceOffset) -> Bool) -> Bool {
        guard skipping(UInt8(ascii: "{")) else { return false }
        tokens.skipWhitespace()
        if tokens.peek == UInt8(ascii: "}") {
            tokens.offset += 1
            return true
        }
        while true {
            tokens.skipWhitespace()
            let keyAt = SourceOffset(byte: tokens.offset)
            guard let key = key(), skipping(UInt8(ascii: ":")) else { return false }
            tokens.skipWhitespace()
            guard body(&self, key, keyAt) else { return false }
            tokens.skipWhitespace()
            let next = tokens.peek
            tokens.offset += 1
            if next == UInt8(ascii: "}") { return true }
            guard next == UInt8(ascii: ",") else { return false }
        }
    }

    /// A quoted key without escapes that is one of `PlainKey`, read without making a string of it.
    private mutating func key() -> PlainKey? {
        guard tokens.peek == Self.quote, let token = try? tokens.string(), !token.escaped else { return nil }
        let range = token.range
        guard !range.isEmpty else { return nil }
        let candidate: PlainKey
        let spelling: StaticString
        switch (range.count, tokens.bytes[range.lowerBound]) {
        case (2, UInt8(ascii: "i")): (candidate, spelling) = (.id, "id")
        case (4, UInt8(ascii: "w")): (candidate, spelling) = (.when, "when")
        case (5, UInt8(ascii: "p")): (candidate, spelling) = (.price, "price")
        case (5, UInt8(ascii: "a")): (candidate, spelling) = (.above, "above")
        case (5, UInt8(ascii: "b")): (candidate, spelling) = (.below, "below")
        case (6, UInt8(ascii: "s")): (candidate, spelling) = (.symbol, "symbol")
        case (6, UInt8(ascii: "n")): (candidate, spelling) = (.notify, "notify")
        case (6, UInt8(ascii: "r")): (candidate, spelling) = (.repeat, "repeat")
        case (6, UInt8(ascii: "c")): (candidate, spelling) = (.change, "change")
        case (6, UInt8(ascii: "w")): (candidate, spelling) = (.window, "window")
        case (6, UInt8(ascii: "i")): (candidate, spelling) = (.inside, "inside")
        case (7, UInt8(ascii: "m")): (candidate, spelling) = (.message, "message")
        case (7, UInt8(ascii: "e")): (candidate, spelling) = (.enabled, "enabled")
        case (7, UInt8(ascii: "o")): (candidate, spelling) = (.outside, "outside")
        case (8, UInt8(ascii: "c")): (candidate, spelling) = (.cooldown, "cooldown")
        case (10, UInt8(ascii: "h")): (candidate, spelling) = (.hysteresis, "hysteresis")
        case (12, UInt8(ascii: "c")):
            (candidate, spelling) =
                tokens.bytes[range.lowerBound + 7] == UInt8(ascii: "A")
                ? (.crossesAbove, "crossesAbove") : (.crossesBelow, "crossesBelow")
        default: return nil
        }
        return tokens.matches(range, spelling) ? candidate : nil
    }

    /// A string without escapes, as `JSONReader.readString` reads it; with `allowingColon`
    /// false, also without a `:`.
    private mutating func string(allowingColon: Bool = true) -> JSONNode? {
        let start = tokens.offset
        guard tokens.peek == Self.quote, let token = try? tokens.string(), !token.escaped else { return nil }
        if !allowingColon, tokens.bytes[token.range].contains(UInt8(ascii: ":")) { return nil }
        return JSONNode(position: SourceOffset(byte: start), value: .string(tokens.text(token.range)))
    }

    /// `[]` or `[S, …]` of strings as `string` reads them.
    private mutating func stringArray() -> JSONNode? {
        let start = SourceOffset(byte: tokens.offset)
        guard skipping(UInt8(ascii: "[")) else { return nil }
        var elements: [JSONNode] = []
        tokens.skipWhitespace()
        if tokens.peek == UInt8(ascii: "]") {
            tokens.offset += 1
            return JSONNode(position: start, value: .array(elements))
        }
        while true {
            tokens.skipWhitespace()
            guard let element = string() else { return nil }
            elements.append(element)
            tokens.skipWhitespace()
            let next = tokens.peek
            tokens.offset += 1
            if next == UInt8(ascii: "]") { return JSONNode(position: start, value: .array(elements)) }
            guard next == UInt8(ascii: ",") else { return nil }
        }
    }

    /// A number per RFC 8259 with its value (see `PlainNumber`): the tokenizer's `double`,
    /// which is exactly `Double(String)` of its text.
    private mutating func number() -> PlainNumber? {
        tokens.skipWhitespace()
        guard let number = numberToken() else { return nil }
        let value = tokens.double(number)
        return PlainNumber(value: value.isFinite ? value : nil)
    }

    /// A number per RFC 8259 as `JSONReader.readNumber` keeps it: its text.
    private mutating func numberNode() -> JSONNode? {
        let start = tokens.offset
        guard let number = numberToken() else { return nil }
        return JSONNode(position: SourceOffset(byte: start), value: .number(tokens.text(number.range)))
    }

    /// The number at the cursor, ending where a number may end (not `01`, not `1x`).
    private mutating func numberToken() -> JSONNumber? {
        guard let number = try? tokens.number() else { return nil }
        let next = tokens.peek
        guard next != 0, !JSONTokenizer.isDigit(next), !JSONTokenizer.isLetter(next) else { return nil }
        return number
    }

    /// `true` or `false`.
    private mutating func bool() -> JSONNode? {
        let start = SourceOffset(byte: tokens.offset)
        let value = tokens.literal("true")
        guard value || tokens.literal("false") else { return nil }
        guard tokens.peek != 0, !JSONTokenizer.isLetter(tokens.peek) else { return nil }
        return JSONNode(position: start, value: .bool(value))
    }

    /// Skips whitespace, then `byte`; false when something else comes first.
    private mutating func skipping(_ byte: UInt8) -> Bool {
        tokens.skipWhitespace()
        guard tokens.peek == byte else { return false }
        tokens.offset += 1
        return true
    }
}

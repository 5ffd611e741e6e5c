/// Written by hand because it must see a rule's bytes without building the syntax tree that
/// makes the general reader and checker cost tens of microseconds a rule.
///
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

/// Scans one rule object at `index` (see `PlainRule`); every method returns nil (or false)
/// as soon as the text is not of that shape.
struct PlainRuleScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int

    private static let quote = UInt8(ascii: "\"")

    /// Reads the rule at `index` into `rule`, leaving `index` just past it; false when it is
    /// not of the plain shape.
    mutating func rule(_ rule: inout PlainRule) -> Bool {
        var when = false
        let read = members { scanner, key, keyAt in
            let member = { (value: JSONNode?) in value.map { JSONMember(key: key.rawValue, keyPosition: keyAt, value: $0) } }
            // A key already read is a duplicate: the full read reports it.
            switch key {
            case .id where rule.id == nil: rule.id = scanner.string(); return rule.id != nil
            case .symbol where rule.symbol == nil: rule.symbol = member(scanner.string()); return rule.symbol != nil
            case .when where !when: when = true; return scanner.when(&rule)
            case .notify where rule.notify == nil: rule.notify = member(scanner.stringArray()); return rule.notify != nil
            case .cooldown where rule.cooldown == nil: rule.cooldown = member(scanner.string()); return rule.cooldown != nil
            case .repeat where rule.repeatMode == nil: rule.repeatMode = member(scanner.string()); return rule.repeatMode != nil
            case .hysteresis where rule.hysteresis == nil:
                rule.hysteresis = member(scanner.numberNode())
                return rule.hysteresis != nil
            case .message where rule.message == nil: rule.message = scanner.string(); return rule.message != nil
            case .enabled where rule.enabled == nil: rule.enabled = scanner.bool(); return rule.enabled != nil
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
                      scanner.skipping(UInt8(ascii: "]")) else { return false }
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
        skipWhitespace()
        if isByte(UInt8(ascii: "}")) {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            let keyAt = SourceOffset(byte: index)
            guard let key = key(), skipping(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            guard body(&self, key, keyAt) else { return false }
            skipWhitespace()
            guard index < bytes.count else { return false }
            let next = bytes[index]
            index += 1
            if next == UInt8(ascii: "}") { return true }
            guard next == UInt8(ascii: ",") else { return false }
        }
    }

    /// A quoted key that is one of `PlainKey`, read without making a string of it.
    private mutating func key() -> PlainKey? {
        guard isByte(Self.quote) else { return nil }
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != Self.quote {
            guard bytes[end] != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        guard end < bytes.count, end > start else { return nil }
        let candidate: PlainKey
        let spelling: StaticString
        switch (end - start, bytes[start]) {
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
            (candidate, spelling) = bytes[start + 7] == UInt8(ascii: "A")
                ? (.crossesAbove, "crossesAbove") : (.crossesBelow, "crossesBelow")
        default: return nil
        }
        for i in 1..<spelling.utf8CodeUnitCount where spelling.utf8Start[i] != bytes[start + i] { return nil }
        index = end + 1
        return candidate
    }

    /// A string of ASCII without escapes or control characters.
    private mutating func string() -> JSONNode? {
        guard isByte(Self.quote) else { return nil }
        let start = index
        var end = index + 1
        while end < bytes.count {
            let byte = bytes[end]
            if byte == Self.quote {
                index = end + 1
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + 1)..<end]), as: UTF8.self)
                return JSONNode(position: SourceOffset(byte: start), value: .string(text))
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        return nil
    }

    /// `[]` or `[S, …]` of strings as `string` reads them.
    private mutating func stringArray() -> JSONNode? {
        let start = SourceOffset(byte: index)
        guard skipping(UInt8(ascii: "[")) else { return nil }
        var elements: [JSONNode] = []
        skipWhitespace()
        if isByte(UInt8(ascii: "]")) {
            index += 1
            return JSONNode(position: start, value: .array(elements))
        }
        while true {
            skipWhitespace()
            guard let element = string() else { return nil }
            elements.append(element)
            skipWhitespace()
            guard index < bytes.count else { return nil }
            let next = bytes[index]
            index += 1
            if next == UInt8(ascii: "]") { return JSONNode(position: start, value: .array(elements)) }
            guard next == UInt8(ascii: ",") else { return nil }
        }
    }

    /// A number per RFC 8259 with its value (see `PlainNumber`).
    private mutating func number() -> PlainNumber? {
        skipWhitespace()
        let start = index
        guard let digits = skipNumber() else { return nil }
        if let value = digits.exactValue { return PlainNumber(value: value) }
        let value = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
        return PlainNumber(value: value.flatMap { $0.isFinite ? $0 : nil })
    }

    /// A number per RFC 8259 as `JSONReader.readNumber` keeps it: its text.
    private mutating func numberNode() -> JSONNode? {
        let start = index
        guard skipNumber() != nil else { return nil }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        return JSONNode(position: SourceOffset(byte: start), value: .number(text))
    }

    /// Moves past a number per RFC 8259 (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`)
    /// that ends where a number may end; nil when there is none.
    private mutating func skipNumber() -> DecimalDigits? {
        var digits = DecimalDigits()
        digits.negative = isByte(UInt8(ascii: "-"))
        if digits.negative { index += 1 }
        guard isDigit else { return nil }
        if isByte(UInt8(ascii: "0")) {
            index += 1
        } else {
            while isDigit { digits.add(bytes[index], fraction: false); index += 1 }
        }
        if isByte(UInt8(ascii: ".")) {
            index += 1
            guard isDigit else { return nil }
            while isDigit { digits.add(bytes[index], fraction: true); index += 1 }
        }
        if isByte(UInt8(ascii: "e")) || isByte(UInt8(ascii: "E")) {
            digits.exact = false
            index += 1
            if isByte(UInt8(ascii: "+")) || isByte(UInt8(ascii: "-")) { index += 1 }
            guard isDigit else { return nil }
            while isDigit { index += 1 }
        }
        // A letter or digit right after it (`01`, `1x`) is not a number's end.
        guard index < bytes.count, !isDigit, !isLetter else { return nil }
        return digits
    }

    /// `true` or `false`.
    private mutating func bool() -> JSONNode? {
        let start = SourceOffset(byte: index)
        let value = matches("true")
        guard value || matches("false") else { return nil }
        index += value ? 4 : 5
        guard index < bytes.count, !isLetter else { return nil }
        return JSONNode(position: start, value: .bool(value))
    }

    private func matches(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        return count <= bytes.count - index
            && UnsafeBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[index..<(index + count)])
    }

    /// Skips whitespace, then `byte`; false when something else comes first.
    private mutating func skipping(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard isByte(byte) else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): index += 1
            default: return
            }
        }
    }

    private func isByte(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    private var isDigit: Bool {
        index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
    }

    private var isLetter: Bool {
        index < bytes.count && (bytes[index] | 0x20) >= UInt8(ascii: "a") && (bytes[index] | 0x20) <= UInt8(ascii: "z")
    }
}

/// The digits of a decimal number without exponent, for the value when it is exact: a whole
/// number below 2^53 divided by a power of ten up to 10^22, both exact as Doubles, is one
/// correctly rounded division, the same Double that `Double(String)` gives.
struct DecimalDigits {
    var negative = false
    var significand: UInt64 = 0
    var fractionDigits = 0
    var exact = true

    private static let powers: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    mutating func add(_ digit: UInt8, fraction: Bool) {
        if fraction { fractionDigits += 1 }
        guard significand < 1 << 53 / 10 else {
            exact = false
            return
        }
        significand = significand * 10 + UInt64(digit - UInt8(ascii: "0"))
    }

    var exactValue: Double? {
        guard exact, fractionDigits <= 22 else { return nil }
        let value = Double(significand) / Self.powers[fractionDigits]
        return negative ? -value : value
    }
}

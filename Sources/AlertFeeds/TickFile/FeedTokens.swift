import JSONTokens

/// The feeds' reading of JSON on the shared `JSONTokenizer` (lenient mode: invalid UTF-8 and
/// lone surrogates in strings read as U+FFFD): walking objects and arrays member by member,
/// skipping what a parser does not need while still validating it, so that "unknown keys are
/// ignored" never means "garbage is accepted", and reading numbers the way exchanges write
/// them. Used by the tick line parser, the streaming websocket parsers (BTSE coinIndex,
/// Poloniex ticker) and `FeedJSON`. Errors are `TickLineError`s carrying the byte column.
extension JSONTokenizer {
    /// Objects and arrays nested deeper than this are rejected rather than recursed into.
    static let maxDepth = 64

    /// `expected X at column N`, noting when the line ended early.
    func unexpected(_ what: String) -> TickLineError {
        .syntax(atEnd ? "\(what), found end of line," : what, at: offset)
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8, _ shown: StaticString) throws(TickLineError) {
        guard !atEnd, bytes[offset] == byte else { throw unexpected("expected '\(shown)'") }
        offset += 1
    }

    /// Scans a string whose opening quote is at the cursor and leaves the cursor after the
    /// closing quote. Returns the raw content range (between the quotes) and whether it
    /// contains escapes.
    @inline(__always)
    mutating func scanString() throws(TickLineError) -> (range: Range<Int>, escaped: Bool) {
        guard peek == 0x22 else { throw unexpected("expected '\"'") }
        do {
            return try string()
        } catch {
            throw Self.tickLineError(error)
        }
    }

    /// Scans a number per the JSON grammar.
    @inline(__always)
    mutating func scanNumber() throws(TickLineError) -> JSONNumber {
        do {
            return try number()
        } catch {
            throw Self.tickLineError(error)
        }
    }

    /// The tokenizer's error in the words of tick files and frames.
    static func tickLineError(_ error: JSONTokenError) -> TickLineError {
        switch error.reason {
        case .unterminatedString: .syntax("unterminated string", at: error.offset)
        case .controlCharacter: .syntax("control character in string", at: error.offset)
        case .invalidEscape: .syntax("invalid escape in string", at: error.offset)
        case .invalidUnicodeEscape: .syntax("invalid \\u escape in string", at: error.offset)
        // Only the strict tokenizer of rule files reports these.
        case .unpairedSurrogate, .invalidUTF8: .syntax("invalid string", at: error.offset)
        case .digitExpected(_, let start): .syntax("invalid number", at: start)
        }
    }

    /// The unescaped UTF-8 of string content taken by `scanString`.
    static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        Array(JSONTokenizer(raw).string(0..<raw.count, escaped: true).utf8)
    }

    /// Skips one JSON value of any type, validating it.
    mutating func skipValue(depth: Int = 0) throws(TickLineError) {
        switch peek {
        case 0x22: _ = try scanString()
        case 0x2D, 0x30...0x39: _ = try scanNumber()
        case 0x74: try skipLiteral("true")
        case 0x66: try skipLiteral("false")
        case 0x6E: try skipLiteral("null")
        case 0x7B, 0x5B:
            guard depth < Self.maxDepth else { throw .syntax("nested too deeply", at: offset) }
            let isObject = peek == 0x7B
            let close: UInt8 = isObject ? 0x7D : 0x5D
            offset += 1
            skipWhitespace()
            if peek == close {
                offset += 1
                return
            }
            while true {
                skipWhitespace()
                if isObject {
                    _ = try scanString()
                    skipWhitespace()
                    try expect(0x3A, ":")
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                if peek == 0x2C {
                    offset += 1
                } else if peek == close {
                    offset += 1
                    return
                } else {
                    throw unexpected(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
                }
            }
        default:
            throw unexpected("expected a JSON value")
        }
    }

    /// Skips `true`, `false` or `null` (`word` must be ASCII).
    mutating func skipLiteral(_ word: StaticString) throws(TickLineError) {
        guard literal(word) else { throw unexpected("expected a JSON value") }
    }

    /// Consumes the opening `{` or `[` (whatever is at the cursor must be `open`) and the
    /// whitespace after it. Returns false, having consumed the closer, when the container is
    /// empty; true when a first member or element follows.
    mutating func enterContainer(_ open: UInt8, close: UInt8) throws(TickLineError) -> Bool {
        guard peek == open else { throw unexpected(open == 0x7B ? "expected '{'" : "expected '['") }
        offset += 1
        skipWhitespace()
        if peek == close {
            offset += 1
            return false
        }
        return true
    }

    /// After a member or element: consumes `,` (true: another follows) or the closer (false).
    mutating func nextInContainer(close: UInt8) throws(TickLineError) -> Bool {
        skipWhitespace()
        if peek == 0x2C {
            offset += 1
            skipWhitespace()
            return true
        }
        if peek == close {
            offset += 1
            return false
        }
        throw unexpected(close == 0x7D ? "expected ',' or '}'" : "expected ',' or ']'")
    }

    /// Scans `"key" :` and the whitespace after the colon; returns the key's raw range.
    mutating func memberKey() throws(TickLineError) -> (range: Range<Int>, escaped: Bool) {
        let key = try scanString()
        skipWhitespace()
        try expect(0x3A, ":")
        skipWhitespace()
        return key
    }

    /// A number as exchanges send it: a JSON number, or a string holding one (`"0.00001248"`,
    /// `"6.3e-9"`). `null`, other strings and other types give nil (the value is skipped and
    /// validated). Strings with escapes are not numbers.
    mutating func lenientNumber() throws(TickLineError) -> Double? {
        switch peek {
        case 0x2D, 0x30...0x39:
            return double(try scanNumber())
        case 0x22:
            let (range, escaped) = try scanString()
            return escaped ? nil : Self.number(in: UnsafeBufferPointer(rebasing: bytes[range]))
        default:
            try skipValue()
            return nil
        }
    }

    /// Like `lenientNumber`, for integer values such as epoch milliseconds.
    mutating func lenientInteger() throws(TickLineError) -> Int64? {
        switch peek {
        case 0x2D, 0x30...0x39:
            return int64(try scanNumber())
        case 0x22:
            let (range, escaped) = try scanString()
            guard !escaped else { return nil }
            var inner = JSONTokenizer(UnsafeBufferPointer(rebasing: bytes[range]))
            guard let n = try? inner.number(), inner.atEnd else { return nil }
            return inner.int64(n)
        default:
            try skipValue()
            return nil
        }
    }

    /// The value of `text` when all of it is one JSON number, else nil.
    static func number(in text: UnsafeBufferPointer<UInt8>) -> Double? {
        var inner = JSONTokenizer(text)
        guard let n = try? inner.number(), inner.atEnd else { return nil }
        return inner.double(n)
    }

    /// The upper-cased text of a string (symbols compare upper-cased, Docs/rules.md#scope).
    /// Avoids the Unicode machinery when the bytes are ASCII.
    func upperCasedString(_ range: Range<Int>, escaped: Bool) -> String {
        if escaped { return string(range, escaped: true).uppercased() }
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        var lower = false
        for c in raw {
            if c >= 0x80 { return string(range, escaped: false).uppercased() }
            if c >= 0x61 && c <= 0x7A { lower = true }
        }
        guard lower else { return String(decoding: raw, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: raw.count) { out in
            for (i, c) in raw.enumerated() { out[i] = (c >= 0x61 && c <= 0x7A) ? c - 0x20 : c }
            return raw.count
        }
    }
}

/// Walking objects and arrays member by member, and reading numbers the way exchanges write
/// them. Used by the streaming websocket parsers (BTSE coinIndex, Poloniex ticker) and by
/// `FeedJSON`, so there is one JSON grammar in the feeds module.
extension JSONByteScanner {
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
            var inner = JSONByteScanner(UnsafeBufferPointer(rebasing: bytes[range]))
            guard let n = try? inner.scanNumber(), inner.atEnd else { return nil }
            return inner.int64(n)
        default:
            try skipValue()
            return nil
        }
    }

    /// The value of `text` when all of it is one JSON number, else nil.
    static func number(in text: UnsafeBufferPointer<UInt8>) -> Double? {
        var inner = JSONByteScanner(text)
        guard let n = try? inner.scanNumber(), inner.atEnd else { return nil }
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

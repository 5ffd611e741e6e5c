/// Kept apart from the rule files' `JSONReader`: tick lines read through its tree of placed
/// values and friendly errors take several times as long, and both keep only byte offsets as
/// places, so sharing one scanner would save no position work.
///
/// A cursor over the UTF-8 bytes of one JSON text, for the hot tick path: no allocation except
/// for decoded strings, no Foundation. It validates what it skips (nested objects and arrays,
/// strings with escapes, numbers, literals) so that "unknown keys are ignored" never means
/// "garbage is accepted". Errors are `TickLineError`s carrying the byte column.
struct JSONByteScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    /// 0-based index of the next unread byte.
    var offset = 0

    /// Objects and arrays nested deeper than this are rejected rather than recursed into.
    static let maxDepth = 64

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var atEnd: Bool { offset >= bytes.count }

    /// The byte at the cursor, or 0 at the end (0 never starts or continues a JSON token).
    @inline(__always)
    var peek: UInt8 { offset < bytes.count ? bytes[offset] : 0 }

    @inline(__always)
    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// `expected X at column N`, noting when the line ended early.
    func unexpected(_ what: String) -> TickLineError {
        .syntax(atEnd ? "\(what), found end of line," : what, at: offset)
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8, _ shown: StaticString) throws(TickLineError) {
        guard !atEnd, bytes[offset] == byte else { throw unexpected("expected '\(shown)'") }
        offset += 1
    }

    // MARK: Strings

    /// Scans a string whose opening quote is at the cursor and leaves the cursor after the
    /// closing quote. Returns the raw content range (between the quotes) and whether it
    /// contains escapes. Escapes are validated; raw control characters are rejected.
    mutating func scanString() throws(TickLineError) -> (range: Range<Int>, escaped: Bool) {
        try expect(0x22, "\"")
        let start = offset
        var escaped = false
        while offset < bytes.count {
            let c = bytes[offset]
            if c == 0x22 {
                offset += 1
                return (start..<(offset - 1), escaped)
            } else if c == 0x5C {
                escaped = true
                let escapeStart = offset
                offset += 1
                guard offset < bytes.count else { break }
                switch bytes[offset] {
                case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
                    offset += 1
                case 0x75:
                    guard offset + 4 < bytes.count, Self.hex4(bytes, offset + 1) != nil else {
                        throw .syntax("invalid \\u escape in string", at: escapeStart)
                    }
                    offset += 5
                default:
                    throw .syntax("invalid escape in string", at: escapeStart)
                }
            } else if c < 0x20 {
                throw .syntax("control character in string", at: offset)
            } else {
                offset += 1
            }
        }
        throw .syntax("unterminated string", at: start - 1)
    }

    /// The text of a scanned string. Without escapes this is one `String(decoding:)` (no
    /// allocation for up to 15 bytes). Invalid UTF-8 and lone surrogates become U+FFFD.
    func string(_ range: Range<Int>, escaped: Bool) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        return escaped ? String(decoding: Self.unescape(raw), as: UTF8.self) : String(decoding: raw, as: UTF8.self)
    }

    /// Unescapes string content already validated by `scanString`.
    static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let c = raw[i]
            guard c == 0x5C else {
                out.append(c)
                i += 1
                continue
            }
            let e = raw[i + 1]
            i += 2
            switch e {
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                var value = hex4(raw, i) ?? 0xFFFD
                i += 4
                if (0xD800...0xDBFF).contains(value), i + 5 < raw.count, raw[i] == 0x5C, raw[i + 1] == 0x75,
                   let low = hex4(raw, i + 2), (0xDC00...0xDFFF).contains(low) {
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                out.append(contentsOf: (Unicode.Scalar(value) ?? "\u{FFFD}").utf8)
            default: out.append(e)  // `"`, `\`, `/`
            }
        }
        return out
    }

    /// Four hex digits at `at`, or nil.
    static func hex4(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32? {
        var v: UInt32 = 0
        for i in at..<(at + 4) {
            let c = b[i]
            let d: UInt8
            switch c {
            case 0x30...0x39: d = c - 0x30
            case 0x41...0x46: d = c - 0x41 + 10
            case 0x61...0x66: d = c - 0x61 + 10
            default: return nil
            }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    // MARK: Other values

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
        let n = word.utf8CodeUnitCount
        guard offset + n <= bytes.count,
              (0..<n).allSatisfy({ bytes[offset + $0] == word.utf8Start[$0] }) else {
            throw unexpected("expected a JSON value")
        }
        offset += n
    }

    /// Whether the raw bytes in `range` are exactly `literal` (ASCII).
    @inline(__always)
    func matches(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let p = literal.utf8Start
        for i in 0..<range.count where bytes[range.lowerBound + i] != p[i] { return false }
        return true
    }
}

/// Strings: every RFC 8259 escape and no raw control characters; in strict mode also
/// well-formed UTF-8 and `\u` surrogates in pairs.
extension JSONTokenizer {
    /// Takes the string whose opening quote is at the cursor, leaving the cursor after its
    /// closing quote: the raw content (between the quotes) and whether it holds escapes.
    @inlinable
    public mutating func string() throws(JSONTokenError) -> (range: Range<Int>, escaped: Bool) {
        let open = offset
        offset += 1
        var escaped = false
        while offset < bytes.count {
            let c = bytes[offset]
            if c == 0x22 {
                offset += 1
                return ((open + 1)..<(offset - 1), escaped)
            } else if c == 0x5C {
                escaped = true
                try escape(openQuote: open)
            } else if c < 0x20 {
                throw JSONTokenError(.controlCharacter(c, openQuote: open), at: offset)
            } else if c >= 0x80 && strict {
                guard let (_, length) = decodeScalar(at: offset) else { throw JSONTokenError(.invalidUTF8, at: offset) }
                offset += length
            } else {
                offset += 1
            }
        }
        throw JSONTokenError(.unterminatedString, at: open)
    }

    /// Takes the escape whose backslash is at the cursor.
    @usableFromInline
    mutating func escape(openQuote: Int) throws(JSONTokenError) {
        let backslash = offset
        guard offset + 1 < bytes.count else { throw JSONTokenError(.unterminatedString, at: openQuote) }
        switch bytes[offset + 1] {
        case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
            offset += 2
        case 0x75:
            let first = try unicodeEscape()
            guard strict else { return }
            switch first {
            case 0xD800...0xDBFF:
                guard peek == 0x5C, offset + 1 < bytes.count, bytes[offset + 1] == 0x75 else {
                    throw JSONTokenError(.unpairedSurrogate(first), at: backslash)
                }
                let low = try unicodeEscape()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONTokenError(.unpairedSurrogate(first), at: backslash)
                }
            case 0xDC00...0xDFFF:
                throw JSONTokenError(.unpairedSurrogate(first), at: backslash)
            default:
                return
            }
        default:
            throw JSONTokenError(.invalidEscape, at: backslash)
        }
    }

    /// Takes `\uXXXX` at the cursor and returns its value.
    @usableFromInline
    mutating func unicodeEscape() throws(JSONTokenError) -> UInt32 {
        guard let value = Self.hex4(bytes, offset + 2) else {
            throw JSONTokenError(.invalidUnicodeEscape, at: offset)
        }
        offset += 6
        return value
    }

    /// The text of a taken string. Without escapes this is one `String(decoding:)` (no
    /// allocation for up to 15 bytes). Invalid UTF-8 and lone surrogates become U+FFFD.
    @inlinable
    public func string(_ range: Range<Int>, escaped: Bool) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[range])
        return escaped
            ? String(decoding: Self.unescaped(raw).bytes, as: UTF8.self) : String(decoding: raw, as: UTF8.self)
    }

    /// String content taken by `string()` with its escapes resolved, as UTF-8 (other bytes are
    /// copied as they are; a lone surrogate becomes U+FFFD), and for each byte out the offset in
    /// `raw` of the source text it came from.
    public static func unescaped(_ raw: UnsafeBufferPointer<UInt8>) -> (bytes: [UInt8], offsets: [Int]) {
        var out: [UInt8] = []
        var offsets: [Int] = []
        out.reserveCapacity(raw.count)
        offsets.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let from = i
            let c = raw[i]
            guard c == 0x5C else {
                out.append(c)
                offsets.append(from)
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
                    let low = hex4(raw, i + 2), (0xDC00...0xDFFF).contains(low)
                {
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                out.append(contentsOf: (Unicode.Scalar(value) ?? "\u{FFFD}").utf8)
            default: out.append(e) // `"`, `\`, `/`
            }
            while offsets.count < out.count { offsets.append(from) }
        }
        return (out, offsets)
    }

    /// Four hex digits at `at` (which must be in `b` with three bytes after it), or nil.
    @inlinable
    public static func hex4(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32? {
        guard at >= 0, at + 4 <= b.count else { return nil }
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

    /// Decodes the UTF-8 sequence starting at `start`: the scalar and its length in bytes, or
    /// nil when the bytes are not well-formed UTF-8 (overlong forms and surrogates included).
    @inlinable
    public func decodeScalar(at start: Int) -> (Unicode.Scalar, Int)? {
        let lead = bytes[start]
        let length: Int
        let minimum: UInt32
        var value: UInt32
        switch lead {
        case 0..<0x80: return (Unicode.Scalar(lead), 1)
        case 0xC2...0xDF: length = 2; minimum = 0x80; value = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; minimum = 0x800; value = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; minimum = 0x10000; value = UInt32(lead & 0x07)
        default: return nil
        }
        guard start + length <= bytes.count else { return nil }
        for i in (start + 1)..<(start + length) {
            guard bytes[i] & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(bytes[i] & 0x3F)
        }
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }
}

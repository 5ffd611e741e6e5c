/// Strings: every RFC 8259 escape, surrogate pairs, and well-formed UTF-8 only.
extension JSONReader {
    mutating func readString() throws(JSONSyntaxError) -> JSONNode {
        let open = position
        index += 1
        // The common case: printable ASCII up to the closing quote, taken as it is.
        var end = index
        while end < bytes.count {
            let byte = bytes[end]
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { break }
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: bytes[index..<end], as: UTF8.self)
                index = end + 1
                return JSONNode(position: open, value: .string(text))
            }
            end += 1
        }
        var text = String.UnicodeScalarView()
        /// Source byte offset of each decoded scalar, from the byte after the quote.
        var offsets: [Int] = []
        var sourceOffset = 0
        var hasEscapes = false
        while true {
            guard index < bytes.count else { throw JSONSyntaxError(position: open, message: "unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return JSONNode(position: open, value: .string(String(text)),
                                escapedOffsets: hasEscapes ? offsets : nil)
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                // A line break inside a string nearly always means the closing quote is missing.
                throw JSONSyntaxError(position: open, message: "unterminated string")
            case 0..<0x20:
                throw fail("control character U+\(hex4(UInt32(byte))) must be escaped in a string")
            case UInt8(ascii: "\\"):
                hasEscapes = true
                let (scalar, width) = try readEscape(openQuote: open)
                text.append(scalar)
                offsets.append(sourceOffset)
                sourceOffset += width
            case 0..<0x80:
                text.append(Unicode.Scalar(byte))
                offsets.append(sourceOffset)
                sourceOffset += 1
                index += 1
            default:
                guard let (scalar, length) = decodeScalar(at: index) else { throw fail("invalid UTF-8 in string") }
                text.append(scalar)
                offsets.append(sourceOffset)
                sourceOffset += length
                index += length
            }
        }
    }

    /// Reads the escape at `index` (a backslash): the scalar and how many source bytes it took.
    /// Errors point at the backslash.
    private mutating func readEscape(openQuote: SourceOffset) throws(JSONSyntaxError) -> (Unicode.Scalar, Int) {
        let backslash = position
        guard index + 1 < bytes.count else { throw JSONSyntaxError(position: openQuote, message: "unterminated string") }
        let letter = bytes[index + 1]
        let simple: Unicode.Scalar?
        switch letter {
        case UInt8(ascii: "\""): simple = "\""
        case UInt8(ascii: "\\"): simple = "\\"
        case UInt8(ascii: "/"): simple = "/"
        case UInt8(ascii: "b"): simple = "\u{08}"
        case UInt8(ascii: "f"): simple = "\u{0C}"
        case UInt8(ascii: "n"): simple = "\n"
        case UInt8(ascii: "r"): simple = "\r"
        case UInt8(ascii: "t"): simple = "\t"
        case UInt8(ascii: "u"): simple = nil
        default:
            index += 1
            throw JSONSyntaxError(position: backslash, message: "invalid escape '\\\(describeEscapeLetter())' in string")
        }
        if let simple {
            index += 2
            return (simple, 2)
        }
        let first = try readHex4(backslash)
        switch first {
        case 0xD800...0xDBFF:
            guard peek(UInt8(ascii: "\\")), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw JSONSyntaxError(position: backslash, message: "unpaired surrogate '\\u\(hex4(first))' in string")
            }
            let low = try readHex4(position)
            guard (0xDC00...0xDFFF).contains(low) else {
                throw JSONSyntaxError(position: backslash, message: "unpaired surrogate '\\u\(hex4(first))' in string")
            }
            let value = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00)
            return (Unicode.Scalar(value)!, 12)
        case 0xDC00...0xDFFF:
            throw JSONSyntaxError(position: backslash, message: "unpaired surrogate '\\u\(hex4(first))' in string")
        default:
            return (Unicode.Scalar(first)!, 6)
        }
    }

    private func describeEscapeLetter() -> String {
        guard index < bytes.count else { return "" }
        let byte = bytes[index]
        if byte >= 0x20, byte < 0x7F { return String(Character(Unicode.Scalar(byte))) }
        if byte >= 0x80, let (scalar, _) = decodeScalar(at: index) { return String(Character(scalar)) }
        return "U+" + hex4(UInt32(byte))
    }

    /// Reads `\uXXXX` at `index`, leaving `index` after it.
    private mutating func readHex4(_ backslash: SourceOffset) throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for i in (index + 2)..<(index + 6) {
            guard i < bytes.count, let digit = hexValue(bytes[i]) else {
                throw JSONSyntaxError(position: backslash, message: "invalid '\\u' escape: expected four hex digits")
            }
            value = value << 4 | digit
        }
        index += 6
        return value
    }

    private func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}

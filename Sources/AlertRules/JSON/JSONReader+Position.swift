/// Places, whitespace and error helpers of the reader.
extension JSONReader {
    /// The place of the byte at `index`. Columns count scalars, i.e. bytes that are not
    /// UTF-8 continuation bytes, since the start of the line.
    ///
    /// Counting goes on from the last place asked for on the same line, so a file written on
    /// one long line (as programs write JSON) is read in linear time, not quadratic.
    var position: SourcePosition {
        let anchor = columnAnchor
        var column = 1
        var i = lineStart
        if anchor.lineStart == lineStart, anchor.index <= index {
            column = anchor.column
            i = anchor.index
        }
        while i < index, i < bytes.count {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        anchor.lineStart = lineStart
        anchor.index = i
        anchor.column = column
        return SourcePosition(line: line, column: column)
    }

    /// Skips JSON whitespace (space, tab, CR, LF); only LF starts a new line, so CRLF files
    /// count lines as editors do.
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    func fail(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(position: position, message: message)
    }

    /// The character at `index` for a message: `'x'`, `U+0007` for controls, or `end of file`.
    func describeHere() -> String {
        guard index < bytes.count else { return "end of file" }
        let byte = bytes[index]
        if byte < 0x20 || byte == 0x7F { return "U+" + hex4(UInt32(byte)) }
        if byte < 0x80 { return "'\(Character(Unicode.Scalar(byte)))'" }
        if let (scalar, _) = decodeScalar(at: index) { return "'\(Character(scalar))'" }
        return "invalid UTF-8"
    }

    func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Decodes the UTF-8 sequence starting at `at`: the scalar and its length in bytes, or nil
    /// when the bytes are not well-formed UTF-8 (overlong forms and surrogates included).
    func decodeScalar(at start: Int) -> (Unicode.Scalar, Int)? {
        let lead = bytes[start]
        let length: Int
        let minimum: UInt32
        var value: UInt32
        switch lead {
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

/// The last column computed by `JSONReader.position`: where counting resumes.
final class ColumnAnchor {
    var lineStart = -1
    var index = 0
    var column = 1
}

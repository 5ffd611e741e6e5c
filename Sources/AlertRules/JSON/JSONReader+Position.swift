import AlertModel

/// Places, whitespace and error helpers of the reader.
extension JSONReader {
    /// The place of the byte at `index`.
    var position: SourceOffset { SourceOffset(byte: index) }

    /// Skips JSON whitespace (space, tab, CR, LF).
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                index += 1
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
        if let (scalar, _) = decodeScalar(at: index) { return UserText.single(String(scalar)) }
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

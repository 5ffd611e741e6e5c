import JSONTokens

/// Strings and numbers: the tokenizer takes them (strictly: well-formed UTF-8, surrogates in
/// pairs); the reader keeps their place and words their errors for people.
extension JSONReader {
    mutating func readString() throws(JSONSyntaxError) -> JSONNode {
        let open = position
        let token: (range: Range<Int>, escaped: Bool)
        do {
            token = try tokens.string()
        } catch {
            throw syntaxError(error)
        }
        guard token.escaped else { return JSONNode(position: open, value: .string(tokens.text(token.range))) }
        // Strict tokens are well-formed UTF-8: each scalar's place is that of its first byte.
        let (text, offsets) = JSONTokenizer.unescaped(UnsafeBufferPointer(rebasing: bytes[token.range]))
        let scalarOffsets = zip(text, offsets).compactMap { $0 & 0xC0 == 0x80 ? nil : $1 }
        return JSONNode(
            position: open, value: .string(String(decoding: text, as: UTF8.self)), escapedOffsets: scalarOffsets)
    }

    /// Numbers per the RFC 8259 grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    /// The text is kept as written; whether it fits a Double is the validator's question.
    mutating func readNumber() throws(JSONSyntaxError) -> JSONNode {
        let start = position
        if peek(UInt8(ascii: "-")), bytes[(index + 1)...].starts(with: "Infinity".utf8) {
            throw JSONSyntaxError(position: start, message: "'-Infinity' is not allowed: JSON numbers must be finite")
        }
        let number: JSONNumber
        do {
            number = try tokens.number()
        } catch {
            throw syntaxError(error)
        }
        if number.isInteger, number.range.count == (number.negative ? 2 : 1), bytes[index - 1] == UInt8(ascii: "0"),
            JSONTokenizer.isDigit(tokens.peek)
        {
            throw JSONSyntaxError(position: start, message: "leading zeros are not allowed in numbers")
        }
        return JSONNode(position: start, value: .number(tokens.text(number.range)))
    }

    /// The tokenizer's error as the rule files' messages word it.
    func syntaxError(_ error: JSONTokenError) -> JSONSyntaxError {
        let at = SourceOffset(byte: error.offset)
        let message: String
        switch error.reason {
        case .unterminatedString:
            message = "unterminated string"
        case .controlCharacter(let byte, let openQuote):
            // A line break inside a string nearly always means the closing quote is missing.
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                return JSONSyntaxError(position: SourceOffset(byte: openQuote), message: "unterminated string")
            }
            message = "control character U+\(hex4(UInt32(byte))) must be escaped in a string"
        case .invalidEscape:
            message = "invalid escape '\\\(describeEscapeLetter(at: error.offset + 1))' in string"
        case .invalidUnicodeEscape:
            message = "invalid '\\u' escape: expected four hex digits"
        case .unpairedSurrogate(let value):
            message = "unpaired surrogate '\\u\(hex4(value))' in string"
        case .invalidUTF8:
            message = "invalid UTF-8 in string"
        case .digitExpected(.afterMinus, _):
            message = "expected a digit after '-'"
        case .digitExpected(.afterPoint, _):
            message = "expected a digit after '.' in number"
        case .digitExpected(.inExponent, _):
            message = "expected a digit in the exponent of number"
        }
        return JSONSyntaxError(position: at, message: message)
    }

    private func describeEscapeLetter(at offset: Int) -> String {
        guard offset < bytes.count else { return "" }
        let byte = bytes[offset]
        if byte >= 0x20, byte < 0x7F { return String(Character(Unicode.Scalar(byte))) }
        if byte >= 0x80, let (scalar, _) = tokens.decodeScalar(at: offset) { return String(Character(scalar)) }
        return "U+" + hex4(UInt32(byte))
    }
}

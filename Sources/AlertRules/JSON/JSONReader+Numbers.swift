/// Numbers per the RFC 8259 grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
/// The text is kept as written; whether it fits a Double is the validator's question.
extension JSONReader {
    mutating func readNumber() throws(JSONSyntaxError) -> JSONNode {
        let start = position
        let from = index
        if peek(UInt8(ascii: "-")) {
            index += 1
            if bytes[index...].starts(with: Array("Infinity".utf8)) {
                throw JSONSyntaxError(position: start, message: "'-Infinity' is not allowed: JSON numbers must be finite")
            }
        }
        guard isDigitHere else { throw fail("expected a digit after '-'") }
        if peek(UInt8(ascii: "0")) {
            index += 1
            if isDigitHere { throw JSONSyntaxError(position: start, message: "leading zeros are not allowed in numbers") }
        } else {
            skipDigits()
        }
        if peek(UInt8(ascii: ".")) {
            index += 1
            guard isDigitHere else { throw fail("expected a digit after '.' in number") }
            skipDigits()
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            index += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { index += 1 }
            guard isDigitHere else { throw fail("expected a digit in the exponent of number") }
            skipDigits()
        }
        return JSONNode(position: start, value: .number(String(decoding: bytes[from..<index], as: UTF8.self)))
    }

    private var isDigitHere: Bool {
        index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while isDigitHere { index += 1 }
    }
}

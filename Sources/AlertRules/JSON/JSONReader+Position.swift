import AlertModel
import JSONTokens

/// Places, whitespace and error helpers of the reader.
extension JSONReader {
    var bytes: UnsafeBufferPointer<UInt8> { tokens.bytes }

    /// The index of the next unread byte.
    var index: Int {
        get { tokens.offset }
        set { tokens.offset = newValue }
    }

    /// The place of the byte at `index`.
    var position: SourceOffset { SourceOffset(byte: index) }

    mutating func skipWhitespace() {
        tokens.skipWhitespace()
    }

    func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
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
        if let (scalar, _) = tokens.decodeScalar(at: index) { return UserText.single(String(scalar)) }
        return "invalid UTF-8"
    }

    func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

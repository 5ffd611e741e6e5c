/// Formats numbers the way pricealert writes them everywhere (JSON, text, messages):
/// integral values without a fraction (`100000`), others in Swift's shortest round-trip form
/// (`43000.5`, `1e-05`). Output is always valid JSON for finite input.
public enum JSONNumber {
    public static func format(_ value: Double) -> String {
        if abs(value) < 1e15, Double(Int64(value)) == value {
            return value == 0 ? "0" : String(Int64(value))  // "0" also folds -0
        }
        if !value.isFinite { return "null" }
        return value.description
    }

    /// Appends `format(value)`'s bytes to `out`.
    public static func append(_ value: Double, to out: inout [UInt8]) {
        out.append(contentsOf: format(value).utf8)
    }
}

/// JSON string quoting with the escapes RFC 8259 requires.
public enum JSONString {
    public static func quote(_ s: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 2)
        append(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `quote(s)`'s bytes to `out`.
    public static func append(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendEscaped(s, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `s` escaped for the inside of a JSON string, without quotes.
    public static func appendEscaped(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { appendEscaped($0, to: &out) }
    }

    /// Appends UTF-8 `bytes` escaped for the inside of a JSON string, without quotes.
    public static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        // Bytes of multi-byte characters are all >= 0x80: only ASCII ever needs an escape.
        guard let first = bytes.firstIndex(where: needsEscape) else {
            out.append(contentsOf: bytes)
            return
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<first]))
        for byte in bytes[first...] {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
    }

    /// Escapes in place what `out` holds from `start` on (UTF-8 text appended unescaped).
    static func escapeTail(of out: inout [UInt8], from start: Int) {
        guard out[start...].contains(where: needsEscape) else { return }
        let tail = Array(out[start...])
        out.removeSubrange(start...)
        tail.withUnsafeBufferPointer { appendEscaped($0, to: &out) }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}

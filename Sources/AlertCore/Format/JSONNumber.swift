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
}

/// JSON string quoting with the escapes RFC 8259 requires.
public enum JSONString {
    public static func quote(_ s: String) -> String {
        var s = s
        return s.withUTF8 { bytes in
            // Bytes of multi-byte characters are all >= 0x80: only ASCII ever needs an escape.
            guard bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                var out = "\""
                out.reserveCapacity(bytes.count + 2)
                out += String(decoding: bytes, as: UTF8.self)
                out += "\""
                return out
            }
            var out: [UInt8] = [UInt8(ascii: "\"")]
            out.reserveCapacity(bytes.count + 8)
            for byte in bytes {
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
            out.append(UInt8(ascii: "\""))
            return String(decoding: out, as: UTF8.self)
        }
    }
}

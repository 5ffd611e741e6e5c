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
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
        return out
    }
}

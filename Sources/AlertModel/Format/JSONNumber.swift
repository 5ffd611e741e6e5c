/// Formats numbers the way pricealert writes them everywhere (JSON, text, messages):
/// integral values without a fraction (`100000`), others in Swift's shortest round-trip form
/// (`43000.5`, `1e-05`). Output is always valid JSON for finite input.
public enum JSONNumber {
    public static func format(_ value: Double) -> String {
        NumberText(value).string
    }

    /// Appends `format(value)`'s bytes to `out`.
    public static func append(_ value: Double, to out: inout [UInt8]) {
        NumberText(value).append(to: &out)
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
        out.write(atMost: 6 * bytes.count) { $0.escaped(bytes) }
    }
}

/// Standard base64 (RFC 4648 §4, with padding), for signatures and `whsec_` keys, without
/// pulling Foundation into the sinks.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i < input.count {
            let b0 = input[i], b1 = i + 1 < input.count ? input[i + 1] : 0, b2 = i + 2 < input.count ? input[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < input.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < input.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Nil when `text` is not valid base64 (padding optional).
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for c in text.utf8 where c != UInt8(ascii: "=") {
            guard let index = alphabet.firstIndex(of: c) else { return nil }
            values.append(UInt8(index))
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)].map { $0 }
            out.append(chunk[0] << 2 | chunk[1] >> 4)
            if chunk.count > 2 { out.append((chunk[1] & 0x0F) << 4 | chunk[2] >> 2) }
            if chunk.count > 3 { out.append((chunk[2] & 0x03) << 6 | chunk[3]) }
            i += 4
        }
        return out
    }
}

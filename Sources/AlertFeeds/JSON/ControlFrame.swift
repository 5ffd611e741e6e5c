/// Websocket frames that are not prices. Parsers return `.control` for all of them, error
/// events included: one bad subscription must not count as a malformed price frame, and the
/// connection stays usable. A feed that wants to log why can ask `errorMessage(in:)` for the
/// (rare) `.control` frames, which costs a second parse only for those.
public enum ControlFrame {
    /// For `{"event":"error", …}` (BTSE, Poloniex v3) the server's message: the string member
    /// `message`, `msg` or `error`, or the whole frame when it has none of them. Nil for
    /// every other frame.
    public static func errorMessage(in frame: [UInt8]) -> String? {
        guard case .success(let json) = FeedJSON.parse(frame),
            json["event"]?.string?.lowercased() == "error"
        else { return nil }
        for key in ["message", "msg", "error"] {
            if let text = json[key]?.string { return text }
        }
        return String(decoding: frame, as: UTF8.self)
    }

    /// Whether a text frame (not JSON) is one of `words`, ignoring surrounding whitespace and
    /// ASCII case: BTSE sends `connect success` and `pong` as bare text.
    static func isPlainText(_ frame: UnsafeBufferPointer<UInt8>, oneOf words: [StaticString]) -> Bool {
        var start = 0, end = frame.count
        while start < end, frame[start] <= 0x20 { start += 1 }
        while end > start, frame[end - 1] <= 0x20 { end -= 1 }
        let n = end - start
        return words.contains { word in
            guard word.utf8CodeUnitCount == n else { return false }
            let p = word.utf8Start
            for i in 0..<n where frame[start + i] | 0x20 != p[i] | 0x20 { return false }
            return true
        }
    }
}

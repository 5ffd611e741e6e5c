/// A REST body that cannot be used at all (not JSON, wrong shape, an error document). Single
/// bad entries are skipped instead; this is for the whole body. `description` is the reason,
/// e.g. `Poloniex markets: not JSON at byte 57 (expected ',' or '}')`.
public struct FeedPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}

/// Reason texts shared by every parser, so they read the same in logs.
enum FeedReason {
    /// `coinIndex frame: not JSON at byte 57 (expected ':')`: the 0-based byte offset, and
    /// what the scanner expected there.
    static func notJSON(_ context: String, _ error: TickLineError) -> String {
        guard let column = error.column else { return "\(context): not JSON (\(error.message))" }
        var what = error.message
        let suffix = " at column \(column)"
        if what.hasSuffix(suffix) { what.removeLast(suffix.count) }
        if what.hasSuffix(",") { what.removeLast() }
        if what.hasSuffix(" line") { what = String(what.dropLast(4)) + "input" }
        return "\(context): not JSON at byte \(column - 1) (\(what))"
    }

    /// The first bytes of a frame, printable, for reasons about unexpected text frames.
    static func preview(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int = 40) -> String {
        let shown = bytes.prefix(limit).map { $0 >= 0x20 && $0 < 0x7F ? Character(UnicodeScalar($0)) : "?" }
        return String(shown) + (bytes.count > limit ? "…" : "")
    }
}

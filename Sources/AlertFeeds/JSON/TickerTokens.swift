import AlertModel
import JSONTokens

/// How a ticker frame parser of the five v3 exchanges reads a frame.
public enum FrameReading: Sendable, CaseIterable {
    /// The exchange's hot ticker message read straight from the tokens: no tree, keys compared
    /// as bytes, numbers read in place, a `String` built only for each tick's symbol. Every
    /// other frame (acks, errors, heartbeats, pongs, bad JSON, unusual layouts) is read as
    /// `.tree` reads it, so the result is always the same as `.tree`'s
    /// (Tests/AlertFeedsTests/TickerTokenPathTests, the `*-frame` fuzz targets).
    case tokens
    /// Every frame parsed into a `FeedJSON` tree, then read member by member.
    case tree
}

/// One member value as a token reader found it, read afterwards exactly as `FeedJSON` reads
/// the same value (`number`, `integer`, `string`, `ExchangeJSON.millis`/`symbol`).
struct TokenValue {
    enum Kind { case absent, number, string, escapedString, other }
    var kind = Kind.absent
    /// A string's raw content (between the quotes).
    var range = 0..<0
    var number: JSONTokens.JSONNumber?
}

/// The error a token reader throws for a frame it leaves to the tree reader: not the hot
/// shape, or a value the tree reads differently from the raw bytes (escapes, symbols the
/// tree refuses). Never shown: the tree reader then gives the frame's real result.
let notTheHotShape = TickLineError("not the hot ticker shape")

extension JSONTokenizer {
    /// Walks the object at the cursor member by member; `member` is called with each key's raw
    /// range and the cursor on its value, and must consume the value. A key with escapes is
    /// left to the tree reader (it compares unescaped keys).
    @inline(__always)
    mutating func tickerMembers(
        _ member: (inout JSONTokenizer, Range<Int>) throws(TickLineError) -> Void
    ) throws(TickLineError) {
        guard try enterContainer(0x7B, close: 0x7D) else { return }
        repeat {
            let (key, escaped) = try memberKey()
            if escaped { throw notTheHotShape }
            try member(&self, key)
        } while try nextInContainer(close: 0x7D)
    }

    /// Walks the array at the cursor; `element` is called with the cursor on each element and
    /// must consume it.
    @inline(__always)
    mutating func tickerElements(
        _ element: (inout JSONTokenizer) throws(TickLineError) -> Void
    )
        throws(TickLineError)
    {
        guard try enterContainer(0x5B, close: 0x5D) else { return }
        repeat { try element(&self) } while try nextInContainer(close: 0x5D)
    }

    /// For a top-level member the reader takes only the first of (`FeedJSON`'s subscript finds
    /// the first): true when this is the first (`seen` is then set) and its value opens with
    /// `opening` (`{` or `[`), for the caller to read; false when an earlier member had the key
    /// (this value is skipped, validated); a first value of another type is left to the tree
    /// reader.
    @inline(__always)
    mutating func firstMember(_ seen: inout Bool, opening: UInt8) throws(TickLineError) -> Bool {
        guard !seen else {
            try skipValue(depth: 1)
            return false
        }
        seen = true
        guard peek == opening else { throw notTheHotShape }
        return true
    }

    /// Takes the value at the cursor (nested `depth` deep in the frame) into `slot` when no
    /// earlier member had the same key (`FeedJSON`'s subscript finds the first); a later one
    /// is skipped, validated.
    @inline(__always)
    mutating func take(_ slot: inout TokenValue, depth: Int) throws(TickLineError) {
        guard slot.kind == .absent else { return try skipValue(depth: depth) }
        switch peek {
        case 0x22:
            let (range, escaped) = try scanString()
            slot = TokenValue(kind: escaped ? .escapedString : .string, range: range)
        case 0x2D, 0x30...0x39:
            slot = TokenValue(kind: .number, number: try scanNumber())
        default:
            try skipValue(depth: depth)
            slot.kind = .other
        }
    }

    /// The first value of each member of the object at the cursor named in `names` (at most
    /// 8), in the order of `names`; the object's values are `depth` deep in the frame. Any
    /// other value at the cursor is skipped and reads as an object without those members (as
    /// `FeedJSON`'s subscript reads it). A member named in `refusing` leaves the frame to the
    /// tree reader.
    @inline(__always)
    mutating func fields(
        _ names: [StaticString], depth: Int, refusing: [StaticString] = []
    )
        throws(TickLineError) -> InlineArray<8, TokenValue>
    {
        var values = InlineArray<8, TokenValue>(repeating: TokenValue())
        guard peek == 0x7B else {
            try skipValue(depth: depth - 1)
            return values
        }
        try tickerMembers { scanner, key throws(TickLineError) in
            for (i, name) in names.enumerated() where scanner.matches(key, name) {
                return try scanner.take(&values[i], depth: depth)
            }
            for name in refusing where scanner.matches(key, name) { throw notTheHotShape }
            try scanner.skipValue(depth: depth)
        }
        return values
    }

    /// Checks that only whitespace follows the frame's value (as `FeedJSON.parse` does).
    mutating func tickerEnd() throws(TickLineError) {
        skipWhitespace()
        guard atEnd else { throw notTheHotShape }
    }

    /// `FeedJSON.number`: a JSON number, or a string that is exactly one.
    @inline(__always)
    func number(_ value: TokenValue) throws(TickLineError) -> Double? {
        switch value.kind {
        case .number: return value.number.map { double($0) }
        case .string: return Self.number(in: UnsafeBufferPointer(rebasing: bytes[value.range]))
        case .escapedString: throw notTheHotShape
        case .absent, .other: return nil
        }
    }

    /// `ExchangeJSON.figure`: a finite `number`.
    @inline(__always)
    func figure(_ value: TokenValue) throws(TickLineError) -> Double? {
        guard let n = try number(value), n.isFinite else { return nil }
        return n
    }

    /// `FeedJSON.integer`: an integer JSON number of at most 18 digits, or a string `Int64(_:)`
    /// reads. Strings of 1–18 digits are read here; other strings `Int64(_:)` might read
    /// (a sign, 19 digits) are left to the tree reader.
    @inline(__always)
    func integer(_ value: TokenValue) throws(TickLineError) -> Int64? {
        switch value.kind {
        case .number: return value.number.flatMap { int64($0) }
        case .string:
            guard !value.range.isEmpty else { return nil }
            var n: Int64 = 0
            for i in value.range {
                let digit = bytes[i] &- 0x30
                guard digit < 10 else {
                    // `Int64(_:)` reads only `[+-]?[0-9]+`: nil here, unless a sign leads.
                    let lead = bytes[value.range.lowerBound]
                    if lead == 0x2B || lead == 0x2D { throw notTheHotShape }
                    return nil
                }
                n = n &* 10 &+ Int64(digit)
            }
            guard value.range.count <= 18 else { throw notTheHotShape }
            return n
        case .escapedString: throw notTheHotShape
        case .absent, .other: return nil
        }
    }

    /// `ExchangeJSON.millis`: an `integer`, or an ASCII RFC 3339 string.
    @inline(__always)
    func millis(_ value: TokenValue) throws(TickLineError) -> Int64? {
        if let i = try integer(value) { return i }
        guard value.kind == .string else { return nil }
        for i in value.range where bytes[i] >= 0x80 { throw notTheHotShape }
        return Timestamp.parse(UnsafeBufferPointer(rebasing: bytes[value.range]))
    }

    /// The symbol `ExchangeJSON.symbol` keeps, built from the bytes: nil when the value is no
    /// string (the entry has no symbol). A string the tree might refuse or read differently
    /// (empty, over 64 bytes, escapes, anything but printable ASCII) is left to the tree reader.
    @inline(__always)
    func symbolName(_ value: TokenValue) throws(TickLineError) -> String? {
        switch value.kind {
        case .string:
            guard !value.range.isEmpty, value.range.count <= 64 else { throw notTheHotShape }
            for i in value.range where bytes[i] < 0x20 || bytes[i] > 0x7E { throw notTheHotShape }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[value.range]), as: UTF8.self)
        case .escapedString: throw notTheHotShape
        case .absent, .number, .other: return nil
        }
    }

    /// Whether the value is the string `literal`; nil when it is no string.
    @inline(__always)
    func string(_ value: TokenValue, is literal: StaticString) throws(TickLineError) -> Bool? {
        switch value.kind {
        case .string: return matches(value.range, literal)
        case .escapedString: throw notTheHotShape
        case .absent, .number, .other: return nil
        }
    }
}

extension ExchangeJSON {
    /// What `tokens` reads from a frame that opens with an object, or nil when it leaves the
    /// frame to the tree reader (it throws for every such frame, bad JSON included, so that
    /// the tree words the reason).
    @inline(__always)
    static func tokenRead<Result>(
        _ frame: [UInt8], _ tokens: (inout JSONTokenizer) throws(TickLineError) -> Result
    ) -> Result? {
        frame.withUnsafeBufferPointer { buffer -> Result? in
            var scanner = JSONTokenizer(buffer)
            scanner.skipWhitespace()
            guard scanner.peek == 0x7B else { return nil }
            return try? tokens(&scanner)
        }
    }
}

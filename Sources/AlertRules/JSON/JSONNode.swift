import JSONTokens

/// Where a value or key starts in a rule file: its byte offset. The reader records only this;
/// `LineTable` turns the few offsets a message names into lines and columns, so reading a big
/// file counts no lines or columns at all.
struct SourceOffset: Sendable, Hashable, Comparable {
    var byte: Int

    static func < (a: SourceOffset, b: SourceOffset) -> Bool { a.byte < b.byte }
}

/// One JSON value with the place its first character sits. Validation needs the place of
/// every value and key to point its errors at them, which no stock JSON decoder keeps.
struct JSONNode: Sendable {
    var position: SourceOffset
    var value: JSONValue
    /// For strings written with escapes: the source byte offset (from the opening quote's next
    /// byte) of each decoded scalar. Nil when the text has no escapes, so the decoded text's
    /// UTF-8 is the source text.
    var escapedOffsets: [Int]? = nil

    /// The place of the decoded scalar at `offset` of a string value, e.g. to point at
    /// a `{{placeholder}}` inside a message.
    func position(ofScalar offset: Int) -> SourceOffset {
        let shift: Int
        if let escaped = escapedOffsets {
            shift = offset < escaped.count ? escaped[offset] : (escaped.last ?? 0) + 1
        } else if case .string(let text) = value {
            shift = text.unicodeScalars.prefix(offset).reduce(0) { $0 + UTF8.width($1) }
        } else {
            shift = offset
        }
        return SourceOffset(byte: position.byte + 1 + shift)
    }
}

enum JSONValue: Sendable {
    /// Members in the order written. A duplicate key is reported by the reader and dropped,
    /// so every key here is unique.
    case object([JSONMember])
    case array([JSONNode])
    case string(String)
    /// The number's text as written, so that range problems (`1e999`) can be reported
    /// with the number the user typed.
    case number(String)
    case bool(Bool)
    case null

    /// The JSON type name used in "found …" messages.
    var typeName: String {
        switch self {
        case .object: return "object"
        case .array: return "array"
        case .string: return "string"
        case .number: return "number"
        case .bool: return "boolean"
        case .null: return "null"
        }
    }
}

struct JSONMember: Sendable {
    var key: String
    /// The place of the key's opening quote.
    var keyPosition: SourceOffset
    var value: JSONNode
}

/// A syntax problem (or a duplicate key) found while reading.
struct JSONSyntaxError: Error, Sendable, Equatable {
    var position: SourceOffset
    var message: String
    /// For a duplicate key: the first one, which the message names as `(first at line L, column C)`.
    var first: SourceOffset? = nil

    /// What a message says after itself about the place of the first of two.
    static func mention(first place: SourcePosition) -> String {
        " (first at line \(place.line), column \(place.column))"
    }
}

/// Places of rule-file offsets, by the tokenizer's position mode.
extension LineTable {
    func positions(of offsets: some Sequence<SourceOffset>) -> [SourceOffset: SourcePosition] {
        let places = positions(of: offsets.lazy.map(\.byte))
        return Dictionary(uniqueKeysWithValues: places.map { (SourceOffset(byte: $0.key), $0.value) })
    }

    func position(of offset: SourceOffset) -> SourcePosition {
        position(of: offset.byte)
    }
}

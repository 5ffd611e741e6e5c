/// A place in a rule file: 1-based line and column, columns counted in Unicode scalars
/// (a tab counts 1), so an editor's "go to line:column" lands on it.
public struct SourcePosition: Sendable, Equatable, Comparable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public static func < (a: SourcePosition, b: SourcePosition) -> Bool {
        (a.line, a.column) < (b.line, b.column)
    }

    public var description: String { "\(line):\(column)" }
}

/// One JSON value with the place its first character sits. Validation needs the place of
/// every value and key to point its errors at them, which no stock JSON decoder keeps.
struct JSONNode: Sendable {
    var position: SourcePosition
    var value: JSONValue
    /// For strings written with escapes: the source column offset (from the opening quote's
    /// next character) of each decoded scalar. Nil when the text has no escapes, so decoded
    /// offsets and source offsets are the same.
    var escapedColumns: [Int]? = nil

    /// The place of the decoded scalar at `offset` of a string value, e.g. to point at
    /// a `{{placeholder}}` inside a message.
    func position(ofScalar offset: Int) -> SourcePosition {
        let shift = escapedColumns.map { offset < $0.count ? $0[offset] : ($0.last ?? 0) + 1 } ?? offset
        return SourcePosition(line: position.line, column: position.column + 1 + shift)
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
    var keyPosition: SourcePosition
    var value: JSONNode
}

/// A syntax problem (or a duplicate key) found while reading.
struct JSONSyntaxError: Error, Sendable, Equatable {
    var position: SourcePosition
    var message: String
}

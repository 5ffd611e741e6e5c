/// Why one line of a tick file is not a tick (Docs/rules.md#ticks; it is reported with its line
/// number and skipped, as Docs/cli.md says). `description` is the whole human message, e.g.
/// `missing "price"` or `expected '"' at column 12`.
public struct TickLineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The human message. Syntax errors end with `at column N`.
    public let message: String
    /// 1-based byte column where a syntax error was found; nil for field errors
    /// (a missing field has no place, and a wrong-typed one is named by its key).
    public let column: Int?

    public init(_ message: String, column: Int? = nil) {
        self.message = message
        self.column = column
    }

    /// A syntax error at 0-based byte `offset`: the message gets ` at column N` appended.
    static func syntax(_ what: String, at offset: Int) -> TickLineError {
        TickLineError("\(what) at column \(offset + 1)", column: offset + 1)
    }

    public var description: String { message }

    static func missing(_ key: String) -> TickLineError { TickLineError("missing \"\(key)\"") }
    static let badTime = TickLineError("\"time\" must be epoch milliseconds or an RFC 3339 string")
    static let badSymbol = TickLineError("\"symbol\" must be a string")
    static let badSource = TickLineError("\"source\" must be a source name: 1 to 32 of a-z, 0-9 and '-'")
    static let badChange = TickLineError("\"change24h\" must be a number or null")
    static func duplicate(_ key: String) -> TickLineError { TickLineError("duplicate key \"\(key)\"") }
}

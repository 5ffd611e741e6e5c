import JSONTokens

/// A parsed JSON document for REST bodies and rare websocket frames, read with the same
/// tokenizer as the hot path. Unlike `JSONSerialization` it keeps `true` apart from `1`, keeps
/// member order, and says at which byte a bad body goes wrong.
///
/// Numbers in strings (`"0.00001248"`, `"6.3e-9"`) are read by `number`, so each parser
/// accepts both spellings without caring which one a source uses today.
enum FeedJSON: Sendable {
    case object([(key: String, value: FeedJSON)])
    case array([FeedJSON])
    case string(String)
    /// The value, and the integer when the text was an integer of at most 18 digits.
    case number(Double, integer: Int64?)
    case bool(Bool)
    case null

    /// Parses a whole body; trailing non-whitespace is an error.
    static func parse(_ bytes: [UInt8]) -> Result<FeedJSON, TickLineError> {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONTokenizer(buffer)
            do throws(TickLineError) {
                scanner.skipWhitespace()
                let value = try scanner.feedJSON(depth: 0)
                scanner.skipWhitespace()
                guard scanner.atEnd else {
                    throw TickLineError.syntax("unexpected text after the value", at: scanner.offset)
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Parses a REST body; a failure names `context` and the byte (`Poloniex markets: not
    /// JSON at byte 0 (expected a JSON value)`).
    static func parse(_ bytes: [UInt8], context: String) -> Result<FeedJSON, FeedPayloadError> {
        parse(bytes).mapError { FeedPayloadError(FeedReason.notJSON(context, $0)) }
    }

    /// The first member named `key` of an object; nil for other values.
    subscript(key: String) -> FeedJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    var members: [(key: String, value: FeedJSON)]? {
        if case .object(let m) = self { return m }
        return nil
    }

    var array: [FeedJSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// A JSON number, or a string that is exactly one JSON number; nil otherwise (`null`,
    /// `"abc"`, `true`, …).
    var number: Double? {
        switch self {
        case .number(let d, _): return d
        case .string(let s):
            var text = s
            return text.withUTF8 { JSONTokenizer.number(in: $0) }
        default: return nil
        }
    }

    /// An integer number, or a string holding one.
    var integer: Int64? {
        switch self {
        case .number(_, let i): return i
        case .string(let s): return Int64(s)
        default: return nil
        }
    }

    /// A short name of the value's type, for reasons like `"data" is a string`.
    var typeName: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}

extension JSONTokenizer {
    mutating func feedJSON(depth: Int) throws(TickLineError) -> FeedJSON {
        switch peek {
        case 0x7B:
            guard depth < Self.maxDepth else { throw .syntax("nested too deeply", at: offset) }
            var members: [(key: String, value: FeedJSON)] = []
            guard try enterContainer(0x7B, close: 0x7D) else { return .object(members) }
            repeat {
                let (range, escaped) = try memberKey()
                members.append((string(range, escaped: escaped), try feedJSON(depth: depth + 1)))
            } while try nextInContainer(close: 0x7D)
            return .object(members)
        case 0x5B:
            guard depth < Self.maxDepth else { throw .syntax("nested too deeply", at: offset) }
            var elements: [FeedJSON] = []
            guard try enterContainer(0x5B, close: 0x5D) else { return .array(elements) }
            repeat {
                elements.append(try feedJSON(depth: depth + 1))
            } while try nextInContainer(close: 0x5D)
            return .array(elements)
        case 0x22:
            let (range, escaped) = try scanString()
            return .string(string(range, escaped: escaped))
        case 0x2D, 0x30...0x39:
            let n = try scanNumber()
            return .number(double(n), integer: int64(n))
        case 0x74:
            try skipLiteral("true")
            return .bool(true)
        case 0x66:
            try skipLiteral("false")
            return .bool(false)
        case 0x6E:
            try skipLiteral("null")
            return .null
        default:
            throw unexpected("expected a JSON value")
        }
    }
}

// Written by hand: Foundation's JSONSerialization drops the order of object members, and the
// order of `portfolios` decides the order of events (Docs/rules.md, event order).

/// A JSON value with object members in file order. Only what the reference reader needs:
/// no positions, no error recovery.
public indirect enum RefJSON: Equatable {
    case object([(String, RefJSON)])
    case array([RefJSON])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public static func == (a: RefJSON, b: RefJSON) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): return x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
        case (.array(let x), .array(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        default: return false
        }
    }

    subscript(key: String) -> RefJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    var members: [(String, RefJSON)]? { if case .object(let m) = self { return m }; return nil }
    var array: [RefJSON]? { if case .array(let a) = self { return a }; return nil }
    var string: String? { if case .string(let s) = self { return s }; return nil }
    var number: Double? { if case .number(let n) = self { return n }; return nil }
    var bool: Bool? { if case .bool(let b) = self { return b }; return nil }

    /// Parses a whole document; throws `RefReadError` at the first syntax error.
    public static func parse(_ text: String) throws -> RefJSON {
        var parser = Parser(bytes: Array(text.utf8))
        let value = try parser.value()
        parser.skipSpace()
        guard parser.at == parser.bytes.count else { throw RefReadError("JSON: text after the value") }
        return value
    }

    struct Parser {
        let bytes: [UInt8]
        var at = 0

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[at]) { at += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            skipSpace()
            guard at < bytes.count, bytes[at] == byte else {
                throw RefReadError("JSON: expected '\(Character(UnicodeScalar(byte)))' at byte \(at)")
            }
            at += 1
        }

        mutating func value() throws -> RefJSON {
            skipSpace()
            guard at < bytes.count else { throw RefReadError("JSON: unexpected end") }
            switch bytes[at] {
            case UInt8(ascii: "{"):
                at += 1
                var members: [(String, RefJSON)] = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
                repeat {
                    skipSpace()
                    guard case .string(let key) = try value() else { throw RefReadError("JSON: key is not a string") }
                    try expect(UInt8(ascii: ":"))
                    members.append((key, try value()))
                    skipSpace()
                } while try more(close: UInt8(ascii: "}"))
                return .object(members)
            case UInt8(ascii: "["):
                at += 1
                var elements: [RefJSON] = []
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(elements) }
                repeat {
                    elements.append(try value())
                    skipSpace()
                } while try more(close: UInt8(ascii: "]"))
                return .array(elements)
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): try word("true"); return .bool(true)
            case UInt8(ascii: "f"): try word("false"); return .bool(false)
            case UInt8(ascii: "n"): try word("null"); return .null
            default:
                let start = at
                while at < bytes.count, "+-0123456789.eE".utf8.contains(bytes[at]) { at += 1 }
                guard let n = Double(String(decoding: bytes[start..<at], as: UTF8.self)) else {
                    throw RefReadError("JSON: bad value at byte \(start)")
                }
                return .number(n)
            }
        }

        mutating func more(close: UInt8) throws -> Bool {
            guard at < bytes.count else { throw RefReadError("JSON: unexpected end") }
            if bytes[at] == UInt8(ascii: ",") { at += 1; return true }
            if bytes[at] == close { at += 1; return false }
            throw RefReadError("JSON: expected ',' at byte \(at)")
        }

        mutating func word(_ w: String) throws {
            let w = Array(w.utf8)
            guard at + w.count <= bytes.count, Array(bytes[at..<at + w.count]) == w else {
                throw RefReadError("JSON: bad literal at byte \(at)")
            }
            at += w.count
        }

        mutating func string() throws -> String {
            at += 1
            var out: [UInt8] = []
            while at < bytes.count, bytes[at] != UInt8(ascii: "\"") {
                if bytes[at] == UInt8(ascii: "\\"), at + 1 < bytes.count {
                    at += 1
                    switch bytes[at] {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        let hex = String(decoding: bytes[(at + 1)..<min(at + 5, bytes.count)], as: UTF8.self)
                        guard let code = UInt32(hex, radix: 16), let scalar = UnicodeScalar(code) else {
                            throw RefReadError("JSON: bad \\u escape")
                        }
                        out.append(contentsOf: Array(String(Character(scalar)).utf8))
                        at += 4
                    default: out.append(bytes[at])
                    }
                } else {
                    out.append(bytes[at])
                }
                at += 1
            }
            guard at < bytes.count else { throw RefReadError("JSON: unterminated string") }
            at += 1
            return String(decoding: out, as: UTF8.self)
        }
    }
}

/// Why the reference reader refused a rule file. The reference reads files that are meant to
/// be valid; its messages only help whoever writes a test.
public struct RefReadError: Error, CustomStringConvertible {
    public let description: String
    public init(_ message: String) { description = message }
}

// Written by hand: no package on the machine's list tokenizes JSON bytes in place with byte
// offsets, and every reader here needs them for its error messages.

/// The one JSON tokenizer of the program: a cursor over UTF-8 bytes that reads one token at a
/// time (a string, a number, a literal, a structural byte) and leaves the cursor just past it,
/// strictly per RFC 8259. It allocates nothing and reads no Foundation. Its readers build on it:
/// the rule files' reader (a tree of placed values), the tick line parser and the exchange
/// parsers (values walked member by member, nothing kept).
///
/// A token's place is its byte offset. Position mode (`LineTable`) turns the offsets a message
/// names into line:column afterwards, so scanning counts no lines.
///
/// Errors are `JSONTokenError`s: a reason and a byte offset, which each reader words for its
/// users.
@frozen
public struct JSONTokenizer {
    public let bytes: UnsafeBufferPointer<UInt8>
    /// 0-based index of the next unread byte.
    public var offset: Int
    /// Strings must also be well-formed UTF-8, and a `\u` surrogate must come in a pair (rule
    /// files, which people edit). Off for feeds: there invalid UTF-8 and lone surrogates are
    /// read as U+FFFD by `string(_:)`.
    public let strict: Bool

    @inlinable
    public init(_ bytes: UnsafeBufferPointer<UInt8>, offset: Int = 0, strict: Bool = false) {
        self.bytes = bytes
        self.offset = offset
        self.strict = strict
    }

    @inlinable
    public var atEnd: Bool { offset >= bytes.count }

    /// The byte at the cursor, or 0 at the end (0 never starts or continues a JSON token).
    @inlinable @inline(__always)
    public var peek: UInt8 { offset < bytes.count ? bytes[offset] : 0 }

    /// Skips JSON whitespace (space, tab, CR, LF).
    @inlinable @inline(__always)
    public mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// Takes `true`, `false` or `null` (`word`, ASCII) at the cursor; false, moving nothing,
    /// when the bytes there are not `word`. What follows the word is the caller's to judge.
    @inlinable
    public mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard offset + n <= bytes.count else { return false }
        for i in 0..<n where bytes[offset + i] != word.utf8Start[i] { return false }
        offset += n
        return true
    }

    /// Takes the run of ASCII letters at the cursor (a literal, or the word a person wrote
    /// instead of one) and returns its range.
    @inlinable
    public mutating func word() -> Range<Int> {
        let start = offset
        while offset < bytes.count, Self.isLetter(bytes[offset]) { offset += 1 }
        return start..<offset
    }

    @inlinable
    public static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) &- 0x61 < 26
    }

    /// Whether the raw bytes in `range` are exactly `literal` (ASCII).
    @inlinable @inline(__always)
    public func matches(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let p = literal.utf8Start
        for i in 0..<range.count where bytes[range.lowerBound + i] != p[i] { return false }
        return true
    }

    /// The end of the array or object at `start` in text known to be valid JSON, found by
    /// looking only at strings and brackets (nothing is validated).
    @inlinable
    public func endOfValidContainer(at start: Int) -> Int {
        var open = 0
        var i = start
        while i < bytes.count {
            switch bytes[i] {
            case 0x5B, 0x7B:
                open += 1
            case 0x5D, 0x7D:
                open -= 1
                if open == 0 { return i + 1 }
            case 0x22:
                i += 1
                while i < bytes.count, bytes[i] != 0x22 {
                    i += bytes[i] == 0x5C ? 2 : 1
                }
            default:
                break
            }
            i += 1
        }
        return i
    }
}

/// Why the bytes at `offset` are not a JSON token.
public struct JSONTokenError: Error, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// The string that opens at `offset` has no closing quote.
        case unterminatedString
        /// A raw control character at `offset`, inside the string opening at `openQuote`.
        case controlCharacter(UInt8, openQuote: Int)
        /// A backslash at `offset` followed by a letter that is no JSON escape.
        case invalidEscape
        /// A `\u` at `offset` without four hex digits.
        case invalidUnicodeEscape
        /// Strict: the `\u` escape at `offset` is half of a surrogate pair whose other half is missing.
        case unpairedSurrogate(UInt32)
        /// Strict: the bytes at `offset` are not well-formed UTF-8.
        case invalidUTF8
        /// The number starting at `start` needs a digit at `offset` (`what` says where in it).
        case digitExpected(NumberPart, start: Int)
    }

    public enum NumberPart: Sendable, Equatable {
        case afterMinus, afterPoint, inExponent
    }

    public var reason: Reason
    public var offset: Int

    @inlinable
    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }
}

import AlertModel
import JSONTokens

/// Reads one JSON document from UTF-8 bytes with the strict `JSONTokenizer`, per RFC 8259 (no
/// comments, no trailing commas, no NaN), keeping the place of every value and key, and wording
/// each error for the person who edits the file.
///
/// The first syntax error stops reading: after it, the rest of the text cannot be trusted.
/// Duplicate keys do not stop it, so the validator can still report the file's other errors.
struct JSONReader {
    /// The outcome: `root` is nil when a syntax error stopped reading. `errors` holds the
    /// duplicate keys found and, last, the syntax error if any.
    struct Document {
        var root: JSONNode?
        var errors: [JSONSyntaxError]
        /// Reading streamed or skipped a member's array: the offset just past it.
        var streamedEnd: Int?
    }

    static func read(_ bytes: [UInt8]) -> Document {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            return reader.readDocumentCatching()
        }
    }

    /// Reads like `read`, but hands each element of the root object's array member `key` to
    /// `element` as soon as it is read, with the root's members read before it, instead of
    /// keeping it: a file of 100 000 rules is never one syntax tree. In the document that
    /// member's value is an empty array. Elements may have been handed over before a syntax
    /// error later in the file stops reading.
    ///
    /// `take`, when given, is offered each element first, with its offset: it may read the
    /// element by its own means and return the offset just past it, or return nil to have it
    /// read here and handed to `element`. Whatever it takes must be valid JSON.
    static func read(
        _ bytes: [UInt8], streaming key: String, take: ((Int, [JSONMember]) -> Int?)? = nil,
        element: (JSONNode, [JSONMember]) -> Void
    ) -> Document {
        withoutActuallyEscaping(element) { element in
            bytes.withUnsafeBufferPointer { buffer in
                guard let take else {
                    var reader = JSONReader(buffer)
                    reader.stream = Stream(key: key, element: element)
                    return reader.readDocumentCatching()
                }
                return withoutActuallyEscaping(take) { take in
                    var reader = JSONReader(buffer)
                    reader.stream = Stream(key: key, take: take, element: element)
                    return reader.readDocumentCatching()
                }
            }
        }
    }

    /// Reads like `read`, but passes over the root object's array member `key` looking only at
    /// strings and brackets (its value in the document is an empty array). Only for text known
    /// to be valid JSON: the rules cache matched it byte for byte with text that was read.
    /// `end`, when given, is where that array ends (`streamedEnd` of an earlier read of the same
    /// bytes): it is jumped to instead of walked to, if a `]` is there.
    static func read(_ bytes: [UInt8], skipping key: String, to end: Int? = nil) -> Document {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            reader.stream = Stream(key: key, element: { _, _ in }, skip: true, knownEnd: end)
            return reader.readDocumentCatching()
        }
    }

    /// The value at `offset`, read alone: for elements that `read(_:streaming:element:)`
    /// handed over, to read again. Nil on a syntax error.
    static func value(in bytes: [UInt8], at offset: SourceOffset) -> JSONNode? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            reader.index = offset.byte
            return try? reader.readValue()
        }
    }

    /// See `read(_:streaming:element:)`.
    struct Stream {
        var key: String
        var take: ((Int, [JSONMember]) -> Int?)? = nil
        var element: (JSONNode, [JSONMember]) -> Void
        var skip = false
        var knownEnd: Int?
        var done = false
        var end: Int?
    }

    private mutating func readDocumentCatching() -> Document {
        do {
            let root = try readDocument()
            return Document(root: root, errors: duplicateKeys, streamedEnd: stream?.end)
        } catch {
            return Document(root: nil, errors: duplicateKeys + [error], streamedEnd: nil)
        }
    }

    /// Deeper nesting than this is surely not a rule file, and would risk the stack.
    static let maxDepth = 256

    var tokens: JSONTokenizer
    var depth = 0
    var duplicateKeys: [JSONSyntaxError] = []
    var stream: Stream?

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        // RFC 8259 §8.1 lets a reader ignore a byte order mark; editors on Windows add one.
        tokens = JSONTokenizer(bytes, offset: bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0, strict: true)
    }

    mutating func readDocument() throws(JSONSyntaxError) -> JSONNode {
        skipWhitespace()
        let root = try readValue()
        skipWhitespace()
        if index < bytes.count {
            throw fail("unexpected \(describeHere()) after the end of the JSON value")
        }
        return root
    }

    mutating func readValue() throws(JSONSyntaxError) -> JSONNode {
        guard index < bytes.count else { throw fail("expected a value, found end of file") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return try nested { (r: inout JSONReader) throws(JSONSyntaxError) in try r.readObject() }
        case UInt8(ascii: "["): return try nested { (r: inout JSONReader) throws(JSONSyntaxError) in try r.readArray() }
        case UInt8(ascii: "\""): return try readString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): return try readWord()
        case UInt8(ascii: "/"): throw fail("comments are not allowed in JSON")
        case UInt8(ascii: "'"): throw fail("strings must be in double quotes")
        default: throw fail("expected a value, found \(describeHere())")
        }
    }

    private mutating func nested(
        _ body: (inout JSONReader) throws(JSONSyntaxError) -> JSONNode
    ) throws(JSONSyntaxError) -> JSONNode {
        guard depth < Self.maxDepth else { throw fail("nesting is too deep (more than \(Self.maxDepth) levels)") }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    private mutating func readObject() throws(JSONSyntaxError) -> JSONNode {
        let start = position
        index += 1
        var members: [JSONMember] = []
        /// Keys by place, once an object is too big for a scan (objects in rule files are small).
        var seen: [String: SourceOffset]?
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            index += 1
            return JSONNode(position: start, value: .object([]))
        }
        while true {
            guard peek(UInt8(ascii: "\"")) else { throw keyExpected() }
            let keyNode = try readString()
            guard case .string(let key) = keyNode.value else { preconditionFailure("readString returns strings") }
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw fail("expected ':' after object key") }
            index += 1
            skipWhitespace()
            let first = seen.map { $0[key] } ?? members.first(where: { $0.key == key })?.keyPosition
            let value: JSONNode
            if depth == 1, first == nil, stream?.done == false, key == stream?.key, peek(UInt8(ascii: "[")) {
                value = try nested { (r: inout JSONReader) throws(JSONSyntaxError) in try r.readStreamedArray(members) }
            } else {
                value = try readValue()
            }
            if let first {
                duplicateKeys.append(
                    JSONSyntaxError(
                        position: keyNode.position, message: "duplicate key \(UserText.single(key))", first: first))
            } else {
                members.append(JSONMember(key: key, keyPosition: keyNode.position, value: value))
                if seen != nil {
                    seen![key] = keyNode.position
                } else if members.count == 16 {
                    seen = Dictionary(members.map { ($0.key, $0.keyPosition) }, uniquingKeysWith: { a, _ in a })
                }
            }
            if try readSeparator(closing: UInt8(ascii: "}"), "expected ',' or '}' after object member") {
                return JSONNode(position: start, value: .object(members))
            }
        }
    }

    private func keyExpected() -> JSONSyntaxError {
        if index < bytes.count, JSONTokenizer.isLetter(bytes[index]) || bytes[index] == UInt8(ascii: "'") {
            return fail("object keys must be strings in double quotes")
        }
        return fail("expected a string key, found \(describeHere())")
    }

    private mutating func readArray() throws(JSONSyntaxError) -> JSONNode {
        let start = position
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            return JSONNode(position: start, value: .array([]))
        }
        while true {
            elements.append(try readValue())
            if try readSeparator(closing: UInt8(ascii: "]"), "expected ',' or ']' after array element") {
                return JSONNode(position: start, value: .array(elements))
            }
        }
    }

    /// An array whose elements go to `stream` as they are read (see `read(_:streaming:element:)`).
    private mutating func readStreamedArray(_ before: [JSONMember]) throws(JSONSyntaxError) -> JSONNode {
        stream?.done = true
        let start = position
        defer {
            let end = index
            stream?.end = end
        }
        if stream?.skip == true {
            if let end = stream?.knownEnd, end > index, end <= bytes.count, bytes[end - 1] == UInt8(ascii: "]") {
                index = end
            } else {
                skipValue()
            }
            return JSONNode(position: start, value: .array([]))
        }
        index += 1
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            index += 1
            return JSONNode(position: start, value: .array([]))
        }
        while true {
            if let end = stream?.take?(index, before) {
                index = end
            } else {
                let element = try readValue()
                stream?.element(element, before)
            }
            if try readSeparator(closing: UInt8(ascii: "]"), "expected ',' or ']' after array element") {
                return JSONNode(position: start, value: .array([]))
            }
        }
    }

    /// Moves past the (valid) array or object at `index`, looking only at strings and brackets
    /// (a `check` whose rules come from the cache skips its whole `rules` array this way).
    private mutating func skipValue() {
        index = tokens.endOfValidContainer(at: index)
    }

    /// Reads what follows an object member or array element: the closing bracket (true), or a
    /// comma with another item after it (false). A comma right before the bracket is reported
    /// at the comma.
    private mutating func readSeparator(closing: UInt8, _ expected: String) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        if peek(closing) {
            index += 1
            return true
        }
        guard peek(UInt8(ascii: ",")) else { throw fail(expected) }
        let comma = position
        index += 1
        skipWhitespace()
        if peek(closing) { throw JSONSyntaxError(position: comma, message: "trailing comma is not allowed") }
        return false
    }

    /// `true`, `false`, `null`, or a helpful error for the words people write instead.
    private mutating func readWord() throws(JSONSyntaxError) -> JSONNode {
        let start = position
        let word = tokens.text(tokens.word())
        switch word {
        case "true": return JSONNode(position: start, value: .bool(true))
        case "false": return JSONNode(position: start, value: .bool(false))
        case "null": return JSONNode(position: start, value: .null)
        case "NaN", "Infinity":
            throw JSONSyntaxError(position: start, message: "'\(word)' is not allowed: JSON numbers must be finite")
        default:
            if ["true", "false", "null"].contains(word.lowercased()) {
                throw JSONSyntaxError(
                    position: start,
                    message: "unexpected '\(word)' (JSON literals are lower case: '\(word.lowercased())')")
            }
            throw JSONSyntaxError(
                position: start, message: "unexpected \(UserText.single(word)) (strings must be in double quotes)")
        }
    }
}

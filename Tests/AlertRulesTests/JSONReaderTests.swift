import JSONTokens
import Testing

@testable import AlertRules

@Suite struct JSONReaderTests {
    private func read(_ text: String) -> JSONReader.Document {
        JSONReader.read(Array(text.utf8))
    }

    /// The first (fatal) error of `text` as `line:column: message`.
    private func syntaxError(_ text: String) -> String? {
        described(read(text).errors, in: Array(text.utf8)).last
    }

    /// Each error as `line:column: message`, as a diagnostic shows it.
    private func described(_ errors: [JSONSyntaxError], in bytes: [UInt8]) -> [String] {
        let lines = LineTable(bytes: bytes)
        return errors.map { error in
            "\(lines.position(of: error.position)): \(error.message)"
                + (error.first.map { JSONSyntaxError.mention(first: lines.position(of: $0)) } ?? "")
        }
    }

    private func place(_ offset: SourceOffset, in text: String) -> SourcePosition {
        LineTable(bytes: Array(text.utf8)).position(of: offset)
    }

    @Test func keepsPlacesOfKeysAndValuesInOrder() throws {
        let text = "{\n  \"b\": [1, true],\n\t\"a\" : {\"x\": null}\n}"
        let document = read(text)
        let root = try #require(document.root)
        guard case .object(let members) = root.value else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["b", "a"])
        #expect(
            members.map { place($0.keyPosition, in: text) } == [
                SourcePosition(line: 2, column: 3), SourcePosition(line: 3, column: 2)
            ])
        #expect(place(members[0].value.position, in: text) == SourcePosition(line: 2, column: 8))
        #expect(place(members[1].value.position, in: text) == SourcePosition(line: 3, column: 8))
        guard case .array(let elements) = members[0].value.value else { Issue.record("not an array"); return }
        #expect(elements.map { place($0.position, in: text).column } == [9, 12])
        #expect(document.errors.isEmpty)
    }

    @Test func countsColumnsInCharactersAfterMultiByteText() throws {
        // "é" is 2 bytes, "€" 3 and "😀" 4; each is one column.
        let text = "{\"é€😀\": \"x\", \"k\": 1}"
        let root = try #require(read(text).root)
        guard case .object(let members) = root.value else { Issue.record("not an object"); return }
        #expect(place(members[0].value.position, in: text) == SourcePosition(line: 1, column: 9))
        #expect(place(members[1].keyPosition, in: text) == SourcePosition(line: 1, column: 14))
        #expect(syntaxError("[\"😀\" 1]") == "1:6: expected ',' or ']' after array element")
    }

    @Test func decodesEveryEscapeAndSurrogatePairs() throws {
        let root = try #require(read(#"["\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"]"#).root)
        guard case .array(let elements) = root.value, case .string(let text) = elements[0].value else {
            Issue.record("not a string array"); return
        }
        #expect(text == "\"\\/\u{08}\u{0C}\n\r\té😀")
    }

    @Test func mapsDecodedOffsetsBackToSourceColumnsInEscapedStrings() throws {
        let text = #"["\u00e9\n{{x}}"]"#
        let root = try #require(read(text).root)
        guard case .array(let elements) = root.value else { Issue.record("not an array"); return }
        // Decoded "é\n{{x}}": offset 2 is "{{", written at column 11 after two escapes.
        #expect(place(elements[0].position(ofScalar: 2), in: text) == SourcePosition(line: 1, column: 11))
        #expect(place(elements[0].position(ofScalar: 1), in: text) == SourcePosition(line: 1, column: 9))
    }

    @Test func mapsDecodedOffsetsBackToSourceColumnsAfterMultiByteText() throws {
        let text = #"["é€ {{x}}"]"#
        let root = try #require(read(text).root)
        guard case .array(let elements) = root.value else { Issue.record("not an array"); return }
        // Decoded offset 3 is "{{": columns count characters, not the five bytes of "é€".
        #expect(place(elements[0].position(ofScalar: 3), in: text) == SourcePosition(line: 1, column: 6))
    }

    @Test func keepsNumberTextAsWritten() throws {
        let root = try #require(read("[-0.5e+3, 1e999, 0]").root)
        guard case .array(let elements) = root.value else { Issue.record("not an array"); return }
        let texts = elements.compactMap { node -> String? in
            if case .number(let text) = node.value { return text }
            return nil
        }
        #expect(texts == ["-0.5e+3", "1e999", "0"])
    }

    @Test func skipsAByteOrderMark() {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("{\"a\": x}".utf8)
        #expect(
            described(JSONReader.read(bytes).errors, in: bytes)
                == ["1:7: unexpected 'x' (strings must be in double quotes)"])
    }

    @Test(arguments: [
        ("", "1:1: expected a value, found end of file"),
        ("{\"a\": 1,}", "1:8: trailing comma is not allowed"),
        ("[1,\n 2,\n]", "2:3: trailing comma is not allowed"),
        ("{\"a\": 1 \"b\": 2}", "1:9: expected ',' or '}' after object member"),
        ("{\"a\": 1", "1:8: expected ',' or '}' after object member"),
        ("[1 2]", "1:4: expected ',' or ']' after array element"),
        ("{\"a\" 1}", "1:6: expected ':' after object key"),
        ("{a: 1}", "1:2: object keys must be strings in double quotes"),
        ("{,}", "1:2: expected a string key, found ','"),
        ("{\"a\": \"abc}", "1:7: unterminated string"),
        ("{\"a\": \"ab\ncd\"}", "1:7: unterminated string"),
        ("[\"a\tb\"]", "1:4: control character U+0009 must be escaped in a string"),
        ("[\"a\\qb\"]", "1:4: invalid escape '\\q' in string"),
        ("[\"\\u12G4\"]", "1:3: invalid '\\u' escape: expected four hex digits"),
        ("[\"x\\ud83d\"]", "1:4: unpaired surrogate '\\uD83D' in string"),
        ("[\"\\ud83d\\u0041\"]", "1:3: unpaired surrogate '\\uD83D' in string"),
        ("[\"\\ude00\"]", "1:3: unpaired surrogate '\\uDE00' in string"),
        ("// hi\n{}", "1:1: comments are not allowed in JSON"),
        ("['a']", "1:2: strings must be in double quotes"),
        ("[NaN]", "1:2: 'NaN' is not allowed: JSON numbers must be finite"),
        ("[-Infinity]", "1:2: '-Infinity' is not allowed: JSON numbers must be finite"),
        ("[True]", "1:2: unexpected 'True' (JSON literals are lower case: 'true')"),
        ("[01]", "1:2: leading zeros are not allowed in numbers"),
        ("[1.]", "1:4: expected a digit after '.' in number"),
        ("[1e+]", "1:5: expected a digit in the exponent of number"),
        ("[-]", "1:3: expected a digit after '-'"),
        ("[+1]", "1:2: expected a value, found '+'"),
        ("[.5]", "1:2: expected a value, found '.'"),
        ("{} {}", "1:4: unexpected '{' after the end of the JSON value"),
        ("[1,\n  é]", "2:3: expected a value, found 'é'")
    ])
    func reportsSyntaxErrorsAtTheirPlace(text: String, expected: String) {
        #expect(syntaxError(text) == expected)
        #expect(read(text).root == nil)
    }

    @Test func rejectsInvalidUTF8InStrings() {
        let bytes = Array("[\"a".utf8) + [0xC3, 0x28] + Array("\"]".utf8)
        #expect(described(JSONReader.read(bytes).errors, in: bytes) == ["1:4: invalid UTF-8 in string"])
    }

    @Test func reportsDuplicateKeysAtTheSecondAndKeepsReading() throws {
        let text = "{\"a\": 1,\n \"a\": 2, \"b\": {\"c\": 1, \"c\": 2}}"
        let document = read(text)
        #expect(
            described(document.errors, in: Array(text.utf8)) == [
                "2:2: duplicate key 'a' (first at line 1, column 2)",
                "2:24: duplicate key 'c' (first at line 2, column 16)"
            ])
        let root = try #require(document.root)
        guard case .object(let members) = root.value else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["a", "b"])
    }

    /// Big objects switch from a scan to a dictionary; duplicates are found either way.
    @Test(arguments: [3, 15, 16, 17, 40])
    func findsDuplicateKeysInObjectsOfAnySize(count: Int) throws {
        let members = (0..<count).map { "\"k\($0)\": \($0)" } + ["\"k1\": 0", "\"k\(count - 1)\": 0"]
        let text = "{" + members.joined(separator: ", ") + "}"
        let document = read(text)
        #expect(
            described(document.errors, in: Array(text.utf8)).map { $0.drop { $0 != " " }.dropFirst() }
                == [
                    "duplicate key 'k1' (first at line 1, column \(Self.column(ofKey: 1))",
                    "duplicate key 'k\(count - 1)' (first at line 1, column \(Self.column(ofKey: count - 1))"
                ].map { $0 + ")" })
        let root = try #require(document.root)
        guard case .object(let kept) = root.value else { Issue.record("not an object"); return }
        #expect(kept.count == count)
    }

    /// Column of `"kN"` in `{"k0": 0, "k1": 1, …}`.
    static func column(ofKey n: Int) -> Int {
        2 + (0..<n).reduce(0) { $0 + "\"k\($1)\": \($1), ".count }
    }

    /// A file on one long line is read in linear time; positions stay right at the end of it.
    @Test func positionsOnOneLongLine() {
        let long = "[" + (0..<20_000).map { "\"é\($0)\"" }.joined(separator: ",") + ",]"
        let text = Array(long.utf8)
        let error = syntaxError(long)
        #expect(error == "1:\(long.count - 1): trailing comma is not allowed")
        #expect(text.count > long.count) // the é are two bytes each: columns count characters
    }

    @Test func stopsNestingTooDeep() {
        let text = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(syntaxError(text) == "1:257: nesting is too deep (more than 256 levels)")
    }
}

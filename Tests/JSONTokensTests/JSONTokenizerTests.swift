import JSONTokens
import Testing

/// Runs `body` on a tokenizer over `text`'s UTF-8.
private func tokens<T>(_ text: [UInt8], strict: Bool = false, _ body: (inout JSONTokenizer) throws -> T) rethrows -> T {
    try text.withUnsafeBufferPointer { buffer in
        var tokenizer = JSONTokenizer(buffer, strict: strict)
        return try body(&tokenizer)
    }
}

private func tokens<T>(_ text: String, strict: Bool = false, _ body: (inout JSONTokenizer) throws -> T) rethrows -> T {
    try tokens(Array(text.utf8), strict: strict, body)
}

/// The error taking a string at the start of `text` throws, or nil.
private func stringError(_ text: [UInt8], strict: Bool) -> JSONTokenError? {
    tokens(text, strict: strict) { t in
        do throws(JSONTokenError) {
            _ = try t.string()
            return nil
        } catch {
            return error
        }
    }
}

private func stringError(_ text: String, strict: Bool = false) -> JSONTokenError? {
    stringError(Array(text.utf8), strict: strict)
}

@Suite struct JSONTokenizerTests {
    @Test func takesEachTokenAndLeavesTheCursorPastIt() throws {
        try tokens(#"  "ab\n" -12.5e1 true nullx"#) { t in
            t.skipWhitespace()
            let string = try t.string()
            #expect(string.range == 3..<7 && string.escaped)
            #expect(t.string(string.range, escaped: true) == "ab\n")
            t.skipWhitespace()
            let number = try t.number()
            #expect(t.double(number) == -125 && !number.isInteger && t.text(number.range) == "-12.5e1")
            t.skipWhitespace()
            let tookTrue = t.literal("true")
            t.skipWhitespace()
            let tookFalse = t.literal("false")
            #expect(tookTrue && !tookFalse && t.offset == 22)
            let word = t.word()
            #expect(t.text(word) == "nullx" && t.atEnd)
        }
    }

    @Test func numbersAreTheDoublesTheStandardLibraryReads() throws {
        let texts = [
            "0", "-0", "1", "43000.5", "0.1", "0.00001248", "6.3e-9", "1E22", "9007199254740993",
            "123456789012345678901234567890", "1e-400", "1e999", "-2.5e+300", "4.9e-324", "1.7976931348623157e308"
        ]
        for text in texts {
            let value = try tokens(text) { t in t.double(try t.number()) }
            #expect(value == Double(text)!, "\(text)")
        }
        #expect(try tokens("1700000000000") { t in t.int64(try t.number()) } == 1_700_000_000_000)
        #expect(try tokens("1.0") { t in t.int64(try t.number()) } == nil)
    }

    @Test func badNumbersNameWhereADigitIsMissing() {
        func failure(_ text: String) -> JSONTokenError? {
            tokens(text) { t in
                do throws(JSONTokenError) {
                    _ = try t.number()
                    return nil
                } catch {
                    return error
                }
            }
        }
        #expect(failure("-x") == JSONTokenError(.digitExpected(.afterMinus, start: 0), at: 1))
        #expect(failure("1.e") == JSONTokenError(.digitExpected(.afterPoint, start: 0), at: 2))
        #expect(failure("2e+") == JSONTokenError(.digitExpected(.inExponent, start: 0), at: 3))
        // A leading zero ends the number; what follows is the reader's to judge.
        #expect(tokens("01") { t in (try? t.number())?.range } == 0..<1)
    }

    @Test func badStringsNameTheirPlaceAndReason() {
        #expect(stringError(#""abc"#) == JSONTokenError(.unterminatedString, at: 0))
        #expect(stringError("\"a\tb\"") == JSONTokenError(.controlCharacter(0x09, openQuote: 0), at: 2))
        #expect(stringError(#""a\qb""#) == JSONTokenError(.invalidEscape, at: 2))
        #expect(stringError(#""\u12""#) == JSONTokenError(.invalidUnicodeEscape, at: 1))
        #expect(stringError(#""ab\"#) == JSONTokenError(.unterminatedString, at: 0))
    }

    @Test func strictModeWantsWellFormedUTF8AndSurrogatePairs() {
        let invalid: [UInt8] = [0x22, 0x61, 0xFF, 0x62, 0x22]
        let overlong: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        #expect(stringError(invalid, strict: true) == JSONTokenError(.invalidUTF8, at: 2))
        #expect(stringError(overlong, strict: true) == JSONTokenError(.invalidUTF8, at: 1))
        #expect(stringError(#""x\ud800""#, strict: true) == JSONTokenError(.unpairedSurrogate(0xD800), at: 2))
        #expect(stringError(#""\udc00""#, strict: true) == JSONTokenError(.unpairedSurrogate(0xDC00), at: 1))
        #expect(stringError(#""\ud800\u0041""#, strict: true) == JSONTokenError(.unpairedSurrogate(0xD800), at: 1))
        #expect(stringError(#""\ud83d\ude00""#, strict: true) == nil)
        #expect(stringError("\"é😀\"", strict: true) == nil)
        // Lenient mode (feeds) takes them, and reads them as U+FFFD.
        #expect(stringError(invalid, strict: false) == nil)
        #expect(tokens(invalid) { t in t.string(1..<4, escaped: false) } == "a\u{FFFD}b")
        #expect(tokens(#""\ud800x""#) { t in t.string(1..<8, escaped: true) } == "\u{FFFD}x")
        #expect(tokens(#""\ud83d\ude00""#) { t in t.string(1..<13, escaped: true) } == "😀")
    }

    @Test func unescapedScalarsKeepTheirSourceOffsets() {
        let text = Array(#"a\u00e9\ud83d\ude00\nb"#.utf8)
        let (bytes, offsets) = text.withUnsafeBufferPointer { JSONTokenizer.unescaped($0) }
        #expect(String(decoding: bytes, as: UTF8.self) == "aé😀\nb")
        #expect(offsets == [0, 1, 1, 7, 7, 7, 7, 19, 21])
    }

    @Test func endOfAValidContainerLooksOnlyAtStringsAndBrackets() {
        let text = #"{"a": ["]", {"b": "\"}"}], "c": 1} tail"#
        #expect(tokens(text) { t in t.endOfValidContainer(at: 0) } == text.utf8.count - 5)
        #expect(tokens(text) { t in t.endOfValidContainer(at: 6) } == 25)
    }

    /// Position mode: lines start after LF only, columns count scalars, a BOM is no column.
    @Test func positionModeNumbersLinesAndColumnsAsEditorsDo() {
        let bytes = Array("\u{FEFF}{\r\n\t\"é\": 1,\n  \"k\": 2}".utf8)
        let table = LineTable(bytes: bytes)
        #expect(table.position(of: 3) == SourcePosition(line: 1, column: 1))
        #expect(table.position(of: 7) == SourcePosition(line: 2, column: 2))
        let one = bytes.firstIndex(of: UInt8(ascii: "1"))!
        #expect(table.position(of: one) == SourcePosition(line: 2, column: 7))
        let k = bytes.firstIndex(of: UInt8(ascii: "k"))!
        let places = table.positions(of: [k, one])
        #expect(places[k] == SourcePosition(line: 3, column: 4) && places[one]?.description == "2:7")
    }
}

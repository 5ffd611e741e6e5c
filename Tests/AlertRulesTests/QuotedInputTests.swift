import AlertModel
import Testing

@testable import AlertRules

/// What a rule file says is quoted in messages with its control characters escaped and cut to
/// about 80 characters: one problem is one line, a file cannot forge another file's error or
/// colour the terminal, and a huge key makes a short message.
@Suite struct QuotedInputTests {
    /// A JSON string literal of `text` as a file would hold it (controls as `\u` escapes).
    static func json(_ text: String) -> String { JSONString.quote(text) }

    static let forged = "x\nother.json:1:1: error: forged"

    /// Each diagnostic is one line without control characters, and short.
    static func expectClean(_ lines: [String], count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(lines.count == count, sourceLocation: sourceLocation)
        for line in lines {
            #expect(
                !line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                "\(line.debugDescription)", sourceLocation: sourceLocation)
            #expect(line.count < 200, sourceLocation: sourceLocation)
        }
    }

    @Test func unknownKeyWithANewlineCannotForgeALine() {
        let rule = #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "# + Self.json(Self.forged) + ": 1}"
        let lines = ruleDiagnostics(rule)
        Self.expectClean(lines, count: 1)
        #expect(lines == [#"r.json:4:63: error: unknown key 'x\nother.json:1:1: error: forged'"#])
    }

    @Test func escapeCodesAreShownNotSent() {
        let rule =
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["#
            + Self.json("\u{1B}[31mred\u{9B}2J") + "]}"
        let lines = ruleDiagnostics(rule)
        Self.expectClean(lines, count: 1)
        #expect(lines == [#"r.json:4:74: error: unknown sink '\u001b[31mred\u009b2J' in 'notify'"#])
    }

    @Test func aHugeKeyIsShortened() {
        let key = String(repeating: "k", count: 10_000_000)
        let lines = diagnostics([("r.json", "{\"version\": 1, \"rules\": [], \"" + key + "\": 1}")])
        Self.expectClean(lines, count: 1)
        #expect(lines == ["r.json:1:29: error: unknown key '" + String(repeating: "k", count: 80) + "…'"])
    }

    @Test func sinkNamesHeadersAndDuplicateKeysAreEscaped() {
        let sinks =
            "{" + Self.json("ops\r\n") + #": "x", "hook": {"type": "webhook", "url": "https://x", "headers": {"#
            + Self.json("X-\u{7}") + ": 1}}}"
        let lines = ruleDiagnostics(#"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}}"#, sinks: sinks)
        Self.expectClean(lines, count: 2)
        #expect(lines[0].hasSuffix(#"error: sink 'ops\r\n' must be an object, found string"#))
        #expect(lines[1].hasSuffix(#"error: header 'X-\u0007' must be a string, found number"#))
        let duplicate = diagnostics([
            (
                "r.json",
                "{\"version\": 1, \"rules\": [], " + Self.json("\u{1B}]0;t\u{7}") + ": 1, "
                    + Self.json("\u{1B}]0;t\u{7}") + ": 2}"
            )
        ])
        // The key is also unknown: two lines, each clean.
        Self.expectClean(duplicate, count: 2)
        #expect(
            duplicate.contains {
                $0.hasSuffix(#"error: duplicate key '\u001b]0;t\u0007' (first at line 1, column 29)"#)
            })
    }

    @Test func valuesAndPlaceholdersAreEscapedAndShortened() {
        let cooldown = ruleDiagnostics(
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "cooldown": "#
                + Self.json("1h\n" + String(repeating: "9", count: 1000)) + "}")
        Self.expectClean(cooldown, count: 1)
        #expect(cooldown[0].contains(#"'cooldown' is not a valid duration: "1h\n99999"#))
        #expect(cooldown[0].contains("…\" (use e.g."))
        let placeholder = ruleDiagnostics(
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "message": "#
                + Self.json("{{pri\nce}}") + "}")
        Self.expectClean(placeholder, count: 1)
        #expect(placeholder[0].contains(#"unknown placeholder '{{pri\nce}}' in 'message'"#))
        let number = ruleDiagnostics(
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1e"#
                + String(repeating: "9", count: 100_000) + "}}}")
        Self.expectClean(number, count: 1)
        #expect(number[0].contains("'above' must be a finite number, found 1e999"))
    }

    @Test func aHugeBareWordIsShortened() {
        let lines = diagnostics([("r.json", "{\"version\": " + String(repeating: "w", count: 1_000_000) + "}")])
        Self.expectClean(lines, count: 1)
        #expect(
            lines == [
                "r.json:1:13: error: unexpected '" + String(repeating: "w", count: 80)
                    + "…' (strings must be in double quotes)"
            ])
    }

    @Test func userTextQuoting() {
        #expect(UserText.single("plain") == "'plain'")
        #expect(UserText.single("it's") == #"'it\'s'"#)
        #expect(UserText.double(#"a "b" \ c"#) == #""a \"b\" \\ c""#)
        #expect(UserText.single("\u{2028}\u{202E}\u{0}") == #"'\u2028\u202e\u0000'"#)
        #expect(UserText.single("é日本") == "'é日本'")
        // The cut never splits an escape: 13 escapes of 6 characters fit in 80, a 14th does not.
        #expect(
            UserText.escaped(String(repeating: "\u{1}", count: 40)) == String(repeating: #"\u0001"#, count: 13) + "…")
    }
}

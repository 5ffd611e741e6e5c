import AlertModel
import AlertSinks
import SeededRandom
import Testing

@testable import AlertRules

/// Rules of the common shape are read straight from their bytes (`PlainRuleScanner`,
/// `FileChecker.plainRule`); every other rule, and every rule with an error, as a syntax tree
/// checked in full. The two readings must give the same rules and the same diagnostics.
@Suite struct PlainRulesTests {
    /// Files of rules drawn from plain and unusual shapes, valid and not, compared between a load
    /// that takes plain rules without a tree and one that reads every rule in full.
    @Test(arguments: Array(1...40) as [UInt64])
    func plainAndFullReadingsAgree(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        let text = RandomRuleFile.make(&rng, rules: 8)
        let sources = [
            RuleSource(path: "r.json", bytes: Array(text.utf8)),
            RuleSource(path: "s.json", bytes: Array(RandomRuleFile.make(&rng, rules: 2, sinks: false, ids: "s").utf8))
        ]
        let plain = RuleLoader.load(
            sources, sinkTypes: SinkRegistry.checks, cachedRules: nil, rulesEnds: [], plainRules: true)
        let full = RuleLoader.load(
            sources, sinkTypes: SinkRegistry.checks, cachedRules: nil, rulesEnds: [], plainRules: false)
        switch (plain, full) {
        case (.success(let a), .success(let b)):
            #expect(a.rules == b.rules, "\(text)")
            #expect(a.rulesEnds == b.rulesEnds)
            #expect(a.expirations == b.expirations)
            #expect(a.portfolios == b.portfolios)
        case (.failure(let a), .failure(let b)):
            #expect(a.diagnostics == b.diagnostics, "\(text)")
        default:
            Issue.record("one reading failed, the other did not: \(plain) \(full)\n\(text)")
        }
    }

    /// Plain rules with one byte changed, dropped or added: whatever the plain reading takes must
    /// be what the full reading takes, and what it leaves must be reported as the full reading does.
    @Test(arguments: [3, 4] as [UInt64])
    func mutatedPlainRulesReadAlike(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        let base = Array(
            #"""
            {"version": 1, "sinks": {"ops": {"type": "file", "path": "o.jsonl"}}, "rules": [
             {"id": "a1", "symbol": "BTC", "when": {"price": {"crossesAbove": 42000.5}}, "cooldown": "1m"},
             {"id": "a2", "symbol": "eth", "when": {"change": {"window": "5m", "below": -1.25}}, "notify": ["ops"]},
             {"id": "a3", "symbol": "SOL", "when": {"price": {"outside": [10, 20.5]}}, "repeat": "once", "enabled": false},
             {"id": "a4", "symbol": "ADA", "when": {"price": {"below": 0.25}}, "hysteresis": 1, "message": "{{symbol}} low"}]}
            """#.utf8)
        let alphabet = Array(#"{}[]":,. -+0123456789eEaAtrufnlsx"#.utf8)
        for _ in 0..<300 {
            var bytes = base
            let at = 80 + rng.below(bytes.count - 80)
            switch rng.below(3) {
            case 0: bytes[at] = alphabet[rng.below(alphabet.count)]
            case 1: bytes.remove(at: at)
            default: bytes.insert(alphabet[rng.below(alphabet.count)], at: at)
            }
            let sources = [RuleSource(path: "r.json", bytes: bytes)]
            let plain = RuleLoader.load(
                sources, sinkTypes: SinkRegistry.checks, cachedRules: nil, rulesEnds: [], plainRules: true)
            let full = RuleLoader.load(
                sources, sinkTypes: SinkRegistry.checks, cachedRules: nil, rulesEnds: [], plainRules: false)
            let text = String(decoding: bytes, as: UTF8.self)
            switch (plain, full) {
            case (.success(let a), .success(let b)): #expect(a.rules == b.rules, "\(text)")
            case (.failure(let a), .failure(let b)): #expect(a.diagnostics == b.diagnostics, "\(text)")
            default: Issue.record("one reading failed, the other did not:\n\(text)")
            }
        }
    }

    /// The comparison above means something only if both outcomes occur, and plain rules are
    /// really taken without a tree.
    @Test func theRandomFilesHoldValidAndInvalidOnes() {
        var rng = SeededRandom(seed: 7)
        var valid = 0
        var taken = 0
        for _ in 0..<60 {
            let text = RandomRuleFile.make(&rng, rules: 3)
            if case .success = RuleLoader.load([RuleSource(path: "r.json", bytes: Array(text.utf8))]) { valid += 1 }
            taken += Self.plainRulesTaken(text)
        }
        #expect(valid >= 3 && valid <= 57)
        #expect(taken >= 40)
    }

    /// How many rules of `text`'s `rules` are taken as plain rules.
    private static func plainRulesTaken(_ text: String) -> Int {
        let bytes = Array(text.utf8)
        var checker = FileChecker(file: "r.json", bytes: bytes)
        var taken = 0
        _ = JSONReader.read(
            bytes, streaming: "rules",
            take: { offset, before in
                let end = checker.plainRule(in: bytes, at: offset, before: before)
                if end != nil { taken += 1 }
                return end
            }, element: { _, _ in })
        return taken
    }

    @Test func aPlainRuleIsTakenWhole() throws {
        let text =
            #"{"id": "a", "symbol": "btc", "when": {"change": {"above": 2.5, "window": "1h"}}, "cooldown": "1m"}, 5"#
        let bytes = Array(text.utf8)
        var checker = FileChecker(file: "r.json", bytes: bytes)
        let taken = checker.plainRule(in: bytes, at: 0, before: [])
        let end = try #require(taken)
        #expect(String(decoding: bytes[end...], as: UTF8.self) == ", 5")
        #expect(
            checker.streamed?.rules == [
                Rule(
                    id: "a", scope: .symbols(["BTC"]), condition: .change(window: 3_600_000, .above(2.5)),
                    cooldown: 60_000, fileVersion: 3)
            ])
        #expect(checker.ruleIDs.map(\.name) == ["a"])
    }

    /// A rule with an error, or not quite of the plain shape, is left to the full reading with
    /// nothing of it recorded, so its errors are reported once.
    @Test func aPlainRuleWithAnErrorIsLeftWhole() {
        for rule in [
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1e16}}}"#,
            #"{"id": "a b", "symbol": "BTC", "when": {"price": {"above": 1}}}"#,
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"inside": [2, 1]}}, "notify": ["x"]}"#,
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "cooldown": "1x"}"#,
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "id": "b"}"#,
            #"{"id": "a", "symbol": "B\u0054C", "when": {"price": {"above": 1}}}"#,
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 01}}}"#
        ] {
            let bytes = Array(rule.utf8)
            var checker = FileChecker(file: "r.json", bytes: bytes)
            let taken = checker.plainRule(in: bytes, at: 0, before: [])
            #expect(taken == nil, "\(rule)")
            #expect(checker.problems.isEmpty && checker.ruleIDs.isEmpty && checker.sinkReferences.isEmpty, "\(rule)")
            #expect(checker.streamed?.rules.isEmpty ?? true)
        }
    }

    /// Thresholds read as `Double(String)` reads them, to the last bit, whether the plain reading
    /// computes them itself (up to 2^53 with up to 22 decimals) or not.
    @Test func numbersReadAsTheyAreWritten() throws {
        var rng = SeededRandom(seed: 11)
        var texts = [
            "0", "-0", "0.1", "0.30000000000000004", "9007199254740991", "9007199254740993",
            "123456789.123456789", "1e3", "2.5E-3", "-1.7976931348623157e308", "4.9e-324",
            "0.0000000000000000000001", "0.00000000000000000000001", "999999999999999.9"
        ]
        for _ in 0..<300 {
            let whole = String(rng.next() % (rng.below(2) == 0 ? 1_000 : 1 << 60))
            let fraction = String(rng.next() % 1_000_000_000_000).prefix(rng.below(14))
            texts.append((rng.below(3) == 0 ? "-" : "") + whole + (fraction.isEmpty ? "" : "." + fraction))
        }
        for text in texts {
            let rule = #"{"id": "a", "symbol": "BTC", "when": {"price": {"below": \#(text)}}}"#
            let expected = try #require(Double(text))
            guard abs(expected) <= 1e15 else { continue }
            let read = try #require(onlyRule(rule), "\(text)")
            guard case .price(.below(let value)) = read.condition else { Issue.record("\(text)"); continue }
            #expect(value.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    /// Places in errors come from byte offsets: a byte order mark is no column, CRLF ends a line
    /// like LF, and a column counts characters, not bytes, after multi-byte ones.
    @Test func errorsAfterPlainRulesPointAtTheirPlace() {
        let text =
            "\u{FEFF}{\"version\": 4, \"rules\": [\r\n"
            + "{\"id\": \"a\", \"symbol\": \"BTC\", \"when\": {\"price\": {\"above\": 1}}, \"message\": \"é {{price}}\"},\r\n"
            + "{\"id\": \"b\", \"symbol\": \"BTC\", \"when\": {\"price\": {\"above\": 1}}},\r\n"
            + "{\"id\": \"c\", \"message\": \"€€\", \"symbol\": \"BTC\", \"when\": {\"price\": {\"above\": 1e16}}},\r\n"
            + "{\"id\": \"b\", \"symbol\": \"BTC\", \"when\": {\"price\": {\"above\": 1}}}]}"
        #expect(
            diagnostics([("r.json", text)]) == [
                "r.json:1:13: error: 'version' must be 1, 2 or 3, found 4",
                "r.json:4:75: error: 'above' must be from -1e15 to 1e15, found 1e16",
                "r.json:5:8: error: duplicate id 'b' (first defined at r.json:3:8)"
            ])
    }
}

/// Rule files drawn at random from the plain shape, the shapes around it and the usual
/// mistakes (about one rule in six has one), in version 1, 2 or 3, with `defaults` before, after or
/// without, LF or CRLF lines and sometimes a byte order mark.
enum RandomRuleFile {
    /// `sinks`: whether the file defines the sink `ops` that rules may name; `ids` starts every
    /// rule id.
    static func make(_ rng: inout SeededRandom, rules count: Int, sinks: Bool = true, ids: String = "r") -> String {
        var rules: [String] = []
        for i in 0..<count {
            let draw = Draw(bad: rng.below(6) == 0)
            rules.append(draw.rule(&rng, id: ids + String(i), previous: ids + String(max(0, i - 1))))
        }
        let draw = Draw(bad: rng.below(10) == 0)
        let list =
            "[" + rules.joined(separator: draw.pick(&rng, [",\n", ", ", ","])) + (rng.below(40) == 0 ? ",]" : "]")
        let defaults =
            "\"defaults\": "
            + draw.pick(
                &rng,
                [
                    "{\"notify\": [\"ops\"]}", "{\"cooldown\": \"10m\", \"repeat\": \"once\"}",
                    "{\"hysteresis\": 0.5}", "{}"
                ], or: ["{\"cooldown\": \"x\"}", "{\"repeat\": {\"every\": \"2h\"}}"])
        var top = ["\"version\": \(rng.below(3) + 1)"]
        if sinks { top.append("\"sinks\": {\"ops\": {\"type\": \"file\", \"path\": \"o.jsonl\"}}") }
        switch rng.below(3) {
        case 0: top += [defaults, "\"rules\": " + list]
        case 1: top += ["\"rules\": " + list, defaults]
        default: top += ["\"rules\": " + list]
        }
        var text = "{" + top.joined(separator: ",\n") + "}\n"
        if rng.below(4) == 0 {
            text = text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        }
        if rng.below(6) == 0 { text = "\u{FEFF}" + text }
        return text
    }

    /// Draws for one rule: from the good choices, and when `bad` also from the mistakes.
    private struct Draw {
        let bad: Bool

        func pick(_ rng: inout SeededRandom, _ good: [String], or mistakes: [String] = []) -> String {
            let all = bad ? good + mistakes : good
            return all[rng.below(all.count)]
        }

        func rule(_ rng: inout SeededRandom, id name: String, previous: String) -> String {
            var members: [String] = []
            let id = pick(
                &rng, ["\"\(name)\"", "\"\(name)-x.y_z\""],
                or: ["\"bad id\"", "\"\"", "5", "\"r\\u0031\"", "\"é\"", "\"\(previous)\""])
            if !bad || rng.below(10) != 0 { members.append("\"id\": \(id)") }
            let symbol = pick(
                &rng, ["\"BTC\"", "\"eth\"", "\"SOL-PERP\"", "\"B\\u0054C\""],
                or: ["\"\"", "3", "\"@pf\"", "\"ÉTH\"", "\"binance:BTC\""])
            if !bad || rng.below(10) != 0 {
                members.append(rng.below(10) == 0 ? "\"symbols\": [\(symbol), \"ada\"]" : "\"symbol\": \(symbol)")
            }
            if !bad || rng.below(10) != 0 { members.append("\"when\": \(condition(&rng))") }
            if rng.below(4) == 0 {
                members.append(
                    "\"cooldown\": " + pick(&rng, ["\"1m\"", "\"0s\"", "\"90s\""], or: ["\"1x\"", "5", "\"400d\""]))
            }
            if rng.below(4) == 0 {
                members.append("\"hysteresis\": " + pick(&rng, ["0.1", "0", "1e1", "2.5"], or: ["-1", "200", "\"x\""]))
            }
            if rng.below(6) == 0 {
                members.append(
                    "\"notify\": "
                        + pick(
                            &rng, ["[\"ops\"]", "[]", "[\"ops\", \"ops\", \"stdout\"]"],
                            or: ["[\"nope\"]", "\"ops\"", "[1]"]))
            }
            if rng.below(8) == 0 {
                members.append(
                    "\"repeat\": "
                        + pick(&rng, ["\"once\"", "\"rearm\""], or: ["\"twice\"", "{\"every\": \"1h\"}", "1"]))
            }
            if rng.below(8) == 0 {
                members.append("\"enabled\": " + pick(&rng, ["true", "false"], or: ["\"yes\"", "null"]))
            }
            if rng.below(8) == 0 {
                members.append(
                    "\"message\": "
                        + pick(
                            &rng, ["\"hi {{symbol}}\"", "\"é {{price}}\"", "\"a\\nb {{rule}}\""],
                            or: ["\"bad {{nope}}\"", "7"]))
            }
            if rng.below(15) == 0 {
                members.append(
                    pick(
                        &rng, ["\"priority\": \"high\"", "\"resolve\": true"],
                        or: ["\"for\": \"1m\"", "\"colour\": 1", "\"id\": \"dup\""]))
            }
            members.shuffle(using: &rng)
            let space = pick(&rng, [" ", "", "\n  ", "\t"])
            return "{" + space + members.joined(separator: "," + space) + space + "}"
        }

        private func condition(_ rng: inout SeededRandom) -> String {
            let number =
                rng.below(4) == 0
                ? pick(
                    &rng, ["-0", "2e3", "-1e15", "0.000001", "123456789012345678901", "0.1e-7"],
                    or: ["1e999", "1e16", "\"5\"", "true"])
                : String(Double(rng.below(100_000)) / 100)
            let change = pick(&rng, [String(Double(rng.below(1_000)) / 100 - 5), "-3"], or: ["1e7", "\"x\""])
            let window = pick(
                &rng, ["\"5m\"", "\"1h\"", "\"24h\"", "\"2d\"", "\"25h\""],
                or: ["\"30s\"", "\"1h30m\"", "\"x\"", "\"31d\"", "60"])
            let (low, high) = (Double(rng.below(1_000)), Double(1_000 + rng.below(1_000)))
            let range = pick(
                &rng, ["[\(low), \(high)]", "[ \(low) ,\(high) ]"],
                or: ["[\(high), \(low)]", "[\(low)]", "[\(number), 1e6]", "5"])
            switch rng.below(12) {
            case 0, 1: return "{\"price\": {\"above\": \(number)}}"
            case 2: return "{\"price\": {\"below\": \(number)}}"
            case 3: return "{\"price\": {\"crossesAbove\": \(number)}}"
            case 4: return "{\"price\": {\"crossesBelow\": \(number)}}"
            case 5: return "{\"price\": {\"\(pick(&rng, ["inside", "outside"]))\": \(range)}}"
            case 6, 7: return "{\"change\": {\"window\": \(window), \"\(pick(&rng, ["above", "below"]))\": \(change)}}"
            case 8: return "{\"change\": {\"\(pick(&rng, ["above", "below"]))\": \(change), \"window\": \(window)}}"
            case 9:
                return pick(
                    &rng, ["{\"fromHigh\": {\"window\": \"1h\", \"below\": -3}}", "{\"move\": {\"percent\": 2}}"],
                    or: [
                        "{\"price\": {\"abov\": 1}}", "{\"price\": {\"above\": 1, \"below\": 2}}",
                        "{\"change\": {\"window\": \"5m\"}}",
                        "{\"price\": {\"above\": 1}, \"change\": {\"window\": \"5m\", \"above\": 1}}", "{}", "[]"
                    ])
            case 10: return "{\"all\": [{\"price\": {\"above\": 1}}, {\"change\": {\"window\": \"5m\", \"above\": 1}}]}"
            default: return "{ \"price\" : { \"above\" : \(number) } }"
            }
        }
    }
}

import AlertModel
import AlertSinks
import Testing

@testable import AlertRules

/// Rules are checked one by one as the reader reaches them (a big file is never one syntax
/// tree); the result must not depend on where `defaults` is written or on what comes later.
@Suite struct StreamedRulesTests {
    private let rules = """
        [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}},
         {"id": "b", "symbol": "ETH", "when": {"price": {"below": 2}}, "cooldown": "1m"}]
        """
    private let defaults = #"{"notify": ["ops"], "cooldown": "10m", "repeat": "once"}"#
    private let sinks = #"{"ops": {"type": "file", "path": "a.jsonl"}}"#

    @Test func defaultsApplyWhereverTheyAreWritten() throws {
        let before = """
            {"version": 1, "sinks": \(sinks), "defaults": \(defaults), "rules": \(rules)}
            """
        let after = """
            {"version": 1, "rules": \(rules), "sinks": \(sinks), "defaults": \(defaults)}
            """
        let first = try #require(ruleSet([("r.json", before)]))
        let second = try #require(ruleSet([("r.json", after)]))
        #expect(first.rules == second.rules)
        #expect(second.rules.map(\.notify) == [["ops"], ["ops"]])
        #expect(second.rules.map(\.cooldown) == [600_000, 60_000])
        #expect(second.rules.map(\.repeatMode) == [.once, .once])
    }

    /// With `defaults` after `rules`, the rules are checked again: each error is reported
    /// once, and a `notify` in the defaults counts once.
    @Test func rulesCheckedAgainReportEachErrorOnce() {
        let text = """
            {"version": 1,
             "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"abov": 1}}}],
             "defaults": {"notify": ["pager"]}}
            """
        #expect(
            diagnostics([("r.json", text)]) == [
                "r.json:2:60: error: unknown operator 'abov' (did you mean 'above'?)",
                "r.json:3:26: error: unknown sink 'pager' in 'notify'"
            ])
    }

    /// A syntax error stops reading: rules already checked before it are not reported.
    @Test func aSyntaxErrorAfterRulesIsTheOnlyError() {
        let text = """
            {"version": 1,
             "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"abov": 1}}}, {"id": "a"}],
             "sinks": {,}}
            """
        #expect(
            diagnostics([("r.json", text)]) == [
                "r.json:3:12: error: expected a string key, found ','"
            ])
    }

    /// Only the first top-level `rules` streams; a second one is read as a duplicate key.
    @Test func aSecondRulesKeyIsADuplicate() {
        let text = """
            {"version": 1, "rules": [],
             "rules": [{"id": "a"}]}
            """
        #expect(
            diagnostics([("r.json", text)]) == [
                "r.json:2:2: error: duplicate key 'rules' (first at line 1, column 16)"
            ])
    }

    @Test func theReaderHandsOverElementsWithTheMembersBeforeThem() throws {
        let text = #"{"a": 1, "list": [{"x": 1}, 2, [3]], "b": {"list": [4]}}"#
        var seen: [(String, [String])] = []
        let document = JSONReader.read(Array(text.utf8), streaming: "list") { node, before in
            seen.append((node.value.typeName, before.map(\.key)))
        }
        #expect(seen.map(\.0) == ["object", "number", "array"])
        #expect(seen.allSatisfy { $0.1 == ["a"] })
        let root = try #require(document.root)
        guard case .object(let members) = root.value, case .array(let left) = members[1].value.value,
            case .object(let nested) = members[2].value.value, case .array(let inner) = nested[0].value.value
        else {
            Issue.record("unexpected shape"); return
        }
        #expect(left.isEmpty)
        #expect(inner.count == 1) // only the root's member streams
        #expect(document.errors.isEmpty)
    }

    /// With cached rules the `rules` array is passed over by looking at strings and brackets
    /// only; brackets and escaped quotes inside strings must not confuse it.
    @Test func cachedRulesSkipTheArrayAndKeepTheRest() throws {
        let text = #"""
            {"version": 1, "rules": [{"id": "a", "symbol": "X]\"}{[", "when": {"price": {"above": 1}}},
                                     {"id": "b", "symbol": "\\", "when": {"price": {"above": 1}}, "message": "[{\"}"}],
             "sinks": {"ops": {"type": "file", "path": "x]\".jsonl"}}, "defaults": {"notify": ["ops"]}}
            """#
        // The text is a valid rule file, read in full.
        let full = try RuleLoader.load([RuleSource(path: "r.json", bytes: Array(text.utf8))]).get()
        #expect(full.rules.map(\.id) == ["a", "b"])
        let cached = [Rule(id: "z", scope: .symbols(["Y"]), condition: .price(.below(3)))]
        let loaded = try RuleLoader.load([RuleSource(path: "r.json", bytes: Array(text.utf8))], cachedRules: cached)
            .get()
        #expect(loaded.rules == cached)
        #expect(loaded.sinks["ops"] != nil)
        let document = JSONReader.read(Array(text.utf8), skipping: "rules")
        let root = try #require(document.root)
        guard case .object(let members) = root.value else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["version", "rules", "sinks", "defaults"])
    }

    /// A full read says where the rules end; a cached read of the same bytes jumps there, and
    /// an end that is not at the array's `]` is not trusted (the array is walked instead).
    @Test func rulesEndsFromAFullReadAreJumpedTo() throws {
        let text = #"""
            {"version": 1, "rules": [{"id": "a", "symbol": "X]", "when": {"price": {"above": 1}}}],
             "sinks": {"ops": {"type": "file", "path": "o.jsonl"}}, "defaults": {"notify": ["ops"]}}
            """#
        let bytes = Array(text.utf8)
        let full = try RuleLoader.load([RuleSource(path: "r.json", bytes: bytes)]).get()
        let end = try #require(full.rulesEnds.first ?? nil)
        #expect(bytes[end - 1] == UInt8(ascii: "]"))
        #expect(String(decoding: bytes[end...], as: UTF8.self).hasPrefix(",\n "))
        let cached = [Rule(id: "z", scope: .symbols(["Y"]), condition: .price(.below(3)))]
        for given in [end, end - 3, end + 2, bytes.count + 5] {
            let loaded = try RuleLoader.load(
                [RuleSource(path: "r.json", bytes: bytes)], cachedRules: cached, rulesEnds: [given]
            ).get()
            #expect(loaded.rules == cached)
            #expect(loaded.sinks["ops"] != nil, "end \(given)")
            #expect(loaded.rulesEnds == [end], "end \(given)")
        }
    }
}

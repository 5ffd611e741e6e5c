import Testing

@testable import AlertRules

/// Mistakes at the top of a file, in `defaults`, and several at once.
@Suite struct FileErrorTests {
    @Test func missingVersionIsReportedAtTheFilesBrace() {
        #expect(
            diagnostics([("r.json", "\n  {\"rules\": []}")]) == ["r.json:2:3: error: missing required key 'version'"])
    }

    @Test func versionMustBeTheNumberOneTwoOrThree() {
        #expect(
            diagnostics([("r.json", #"{"version": 1.5, "rules": []}"#)]) == [
                "r.json:1:13: error: 'version' must be 1, 2 or 3, found 1.5"
            ])
        #expect(
            diagnostics([("r.json", #"{"version": "1", "rules": []}"#)])
                == ["r.json:1:13: error: 'version' must be the number 1, 2 or 3, found string"])
        #expect(diagnostics([("r.json", #"{"version": 1.0, "rules": []}"#)]) == [])
    }

    @Test func missingRulesAndRulesOfTheWrongType() {
        #expect(diagnostics([("r.json", #"{"version": 1}"#)]) == ["r.json:1:1: error: missing required key 'rules'"])
        #expect(
            diagnostics([("r.json", #"{"version": 1, "rules": {}}"#)])
                == ["r.json:1:25: error: 'rules' must be an array, found object"])
    }

    @Test func misspelledTopLevelKeyIsOneErrorNotTwo() {
        #expect(
            diagnostics([("r.json", #"{"version": 1, "rule": []}"#)])
                == ["r.json:1:16: error: unknown key 'rule' (did you mean 'rules'?)"])
    }

    @Test func fileMustBeAnObject() {
        #expect(diagnostics([("r.json", " []")]) == ["r.json:1:2: error: a rule file must be an object, found array"])
    }

    @Test func emptyFileIsASyntaxError() {
        #expect(diagnostics([("r.json", "")]) == ["r.json:1:1: error: expected a value, found end of file"])
    }

    @Test func defaultsAreCheckedLikeRuleKeys() {
        let text = """
            {"version": 1,
            "defaults": {"cooldwn": "1m", "repeat": "never", "notify": ["pager"], "hysteresis": -1},
            "rules": []}
            """
        #expect(
            diagnostics([("r.json", text)]) == [
                "r.json:2:14: error: unknown key 'cooldwn' (did you mean 'cooldown'?)",
                "r.json:2:41: error: 'repeat' must be \"rearm\" or \"once\", found \"never\"",
                "r.json:2:61: error: unknown sink 'pager' in 'notify'",
                "r.json:2:85: error: 'hysteresis' must be 0 or more, found -1"
            ])
    }

    @Test func reportsEveryErrorOfAFileSortedByPlace() {
        let text = """
            {"version": 1,
            "rules": [
              {"id": "a", "symbol": "BTC", "when": {"price": {"above": "1"}}},
              {"id": "b", "symbol": "ETH", "when": {"price": {"inside": [2, 1]}}, "hysteresis": 1},
              {"id": "c b", "symbol": "SOL", "when": {"change": {"window": "1h", "abve": 5}}}
            ],
            "extra": true}
            """
        #expect(
            diagnostics([("r.json", text)]) == [
                "r.json:3:60: error: 'above' must be a number, found string",
                "r.json:4:61: error: 'inside' low bound must be less than high bound, found [2, 1]",
                "r.json:4:85: error: 'hysteresis' is not allowed on 'inside' conditions",
                "r.json:5:10: error: 'id' must be 1 to 64 letters, digits, '.', '_' or '-', found \"c b\"",
                "r.json:5:70: error: unknown key 'abve' (did you mean 'above'?)",
                "r.json:7:1: error: unknown key 'extra'"
            ])
    }

    @Test func syntaxErrorStopsOnlyItsOwnFile() {
        let broken = "{\"version\": 1, \"version\": 1,\n \"rules\": [}"
        let other = #"{"version": 1, "rules": [{"id": "x", "symbol": "BTC", "when": {}}]}"#
        #expect(
            diagnostics([("a.json", broken), ("b.json", other)]) == [
                "a.json:1:16: error: duplicate key 'version' (first at line 1, column 2)",
                "a.json:2:12: error: expected a value, found '}'",
                "b.json:1:63: error: 'when' needs exactly one condition: 'price' or 'change'"
            ])
    }

    @Test func duplicateKeyInARuleIsReportedAndTheRestStillChecked() {
        let rule = #"{"id": "a", "symbol": "BTC", "symbol": "ETH", "when": {"price": {"above": "x"}}}"#
        #expect(
            ruleDiagnostics(rule) == [
                "r.json:4:30: error: duplicate key 'symbol' (first at line 4, column 13)",
                "r.json:4:75: error: 'above' must be a number, found string"
            ])
    }
}

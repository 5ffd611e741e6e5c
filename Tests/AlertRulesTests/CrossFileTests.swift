import Testing

@testable import AlertRules

/// Checks that need all files: one namespace for ids and sink names, `notify` across files.
@Suite struct CrossFileTests {
    private func file(sinks: String = "{}", _ rules: String...) -> String {
        "{\"version\": 1, \"sinks\": \(sinks),\n\"rules\": [\n" + rules.joined(separator: ",\n") + "\n]}"
    }

    private func rule(_ id: String, notify: String = #"["stdout"]"#) -> String {
        #"{"id": "\#(id)", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": \#(notify)}"#
    }

    @Test func duplicateIdInOneFile() {
        #expect(
            diagnostics([("a.json", file(rule("x"), rule("x")))])
                == ["a.json:4:8: error: duplicate id 'x' (first defined at a.json:3:8)"])
    }

    @Test func duplicateIdAcrossFilesNamesTheFirst() {
        #expect(
            diagnostics([("a.json", file(rule("x"))), ("b.json", file(rule("y"), rule("x")))])
                == ["b.json:4:8: error: duplicate id 'x' (first defined at a.json:3:8)"])
    }

    @Test func ruleIdClashesWithASinkOfAnyFile() {
        let sinks = #"{"ops": {"type": "file", "path": "a.jsonl"}}"#
        #expect(
            diagnostics([("a.json", file(sinks: sinks)), ("b.json", file(rule("ops")))])
                == ["b.json:3:8: error: duplicate id 'ops' (first defined at a.json:1:26)"])
        // A sink in a later file clashes with a rule of an earlier one, at the sink's name.
        #expect(
            diagnostics([("a.json", file(rule("ops"))), ("b.json", file(sinks: sinks))])
                == ["b.json:1:26: error: duplicate id 'ops' (first defined at a.json:3:8)"])
    }

    @Test func sameSinkNameInTwoFiles() {
        let sinks = #"{"log": {"type": "file", "path": "a.jsonl"}}"#
        #expect(
            diagnostics([("a.json", file(sinks: sinks)), ("b.json", file(sinks: sinks))])
                == ["b.json:1:26: error: duplicate id 'log' (first defined at a.json:1:26)"])
    }

    @Test func ruleMayBeCalledStdoutUnlessAFileDefinesThatSink() {
        #expect(diagnostics([("a.json", file(rule("stdout")))]) == [])
        let sinks = #"{"stdout": {"type": "stdout", "format": "json"}}"#
        #expect(
            diagnostics([("a.json", file(sinks: sinks, rule("stdout")))])
                == ["a.json:3:8: error: duplicate id 'stdout' (first defined at a.json:1:26)"])
    }

    @Test func notifyMayNameASinkOfALaterFile() throws {
        let sinks = #"{"ops": {"type": "exec", "command": ["/bin/true"]}}"#
        let set = try #require(
            ruleSet([
                ("a.json", file(rule("x", notify: #"["ops", "stdout"]"#))),
                ("b.json", file(sinks: sinks))
            ]))
        #expect(set.rules.map(\.notify) == [["ops", "stdout"]])
        #expect(
            diagnostics([("a.json", file(rule("x", notify: #"["ops"]"#)))])
                == ["a.json:3:74: error: unknown sink 'ops' in 'notify'"])
    }

    @Test func errorsAreInTheOrderTheFilesWereGiven() {
        let bad = file(rule("x", notify: #"["nope"]"#))
        #expect(
            diagnostics([("z.json", bad), ("a.json", file(rule("y", notify: "{}")))]) == [
                "z.json:3:74: error: unknown sink 'nope' in 'notify'",
                "a.json:3:73: error: 'notify' must be an array of sink names, found object"
            ])
    }

    @Test func defaultsApplyToTheirOwnFileOnly() throws {
        let withDefaults = """
            {"version": 1, "sinks": {"ops": {"type": "file", "path": "o.jsonl"}},
             "defaults": {"notify": ["ops"], "cooldown": "10m", "repeat": "once", "hysteresis": 2},
             "rules": [
               {"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}},
               {"id": "b", "symbol": "BTC", "when": {"price": {"above": 1}}, "cooldown": "30s", "repeat": "rearm",
                "hysteresis": 0, "notify": ["stdout"]},
               {"id": "c", "symbol": "BTC", "when": {"price": {"inside": [1, 2]}}}
             ]}
            """
        let set = try #require(ruleSet([("a.json", withDefaults), ("b.json", file(rule("d")))]))
        #expect(set.rules.map(\.id) == ["a", "b", "c", "d"])
        #expect(set.rules.map(\.notify) == [["ops"], ["stdout"], ["ops"], ["stdout"]])
        #expect(set.rules.map(\.cooldown) == [600_000, 30_000, 600_000, 0])
        #expect(set.rules.map(\.repeatMode) == [.once, .rearm, .once, .rearm])
        // A range takes no hysteresis, so the file's default does not reach rule c.
        #expect(set.rules.map(\.hysteresis) == [2, 0, 0, 0])
    }
}

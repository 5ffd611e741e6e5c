import AlertModel
import AlertSinks
import Testing

@testable import AlertRules

/// Valid files become exactly these `Rule` and `SinkDefinition` values.
@Suite struct ValidRuleTests {
    @Test(arguments: [
        (#"{"price": {"above": 43000.5}}"#, Condition.price(.above(43000.5))),
        (#"{"price": {"below": -1}}"#, .price(.below(-1))),
        (#"{"price": {"crossesAbove": 1e5}}"#, .price(.crossesAbove(100_000))),
        (#"{"price": {"crossesBelow": 0.25}}"#, .price(.crossesBelow(0.25))),
        (#"{"price": {"inside": [40000, 45000]}}"#, .price(.inside(40000, 45000))),
        (#"{"price": {"outside": [-2, 2.5]}}"#, .price(.outside(-2, 2.5))),
        (#"{"change": {"window": "24h", "below": -5}}"#, .change(window: 86_400_000, .below(-5))),
        (#"{"change": {"window": "1d", "above": 8}}"#, .change(window: 86_400_000, .above(8))),
        (#"{"change": {"above": 1.5, "window": "1h30m"}}"#, .change(window: 5_400_000, .above(1.5))),
        (#"{"change": {"window": "120000ms", "above": 0}}"#, .change(window: 120_000, .above(0)))
    ])
    func conditionsBecomeTheirValues(when: String, expected: Condition) throws {
        let rule = try #require(onlyRule(#"{"id": "r", "symbol": "BTC", "when": \#(when)}"#))
        #expect(rule.condition == expected)
    }

    @Test func ruleWithoutOptionalKeysGetsTheDefaults() throws {
        let rule = try #require(onlyRule(#"{"id": "btc.up_1-x", "symbol": "btc", "when": {"price": {"above": 1}}}"#))
        #expect(
            rule
                == Rule(
                    id: "btc.up_1-x", scope: .symbols(["BTC"]), condition: .price(.above(1)),
                    notify: ["stdout"], repeatMode: .rearm, cooldown: 0, hysteresis: 0,
                    message: nil, enabled: true))
    }

    @Test func everyOptionalKeyIsRead() throws {
        let rule = try #require(
            onlyRule(
                """
                {"id": "eth", "symbols": ["eth", "Sol", "ETH"], "when": {"change": {"window": "1h", "below": -3}},
                 "notify": ["log", "stdout", "log"], "repeat": "once", "cooldown": "1h30m", "hysteresis": 0.5,
                 "message": "{{ symbol }} fell {{value}}%", "enabled": false}
                """, sinks: #"{"log": {"type": "file", "path": "alerts.jsonl"}}"#))
        #expect(
            rule
                == Rule(
                    id: "eth", scope: .symbols(["ETH", "SOL"]), condition: .change(window: 3_600_000, .below(-3)),
                    notify: ["log", "stdout"], repeatMode: .once, cooldown: 5_400_000, hysteresis: 0.5,
                    message: "{{ symbol }} fell {{value}}%", enabled: false))
    }

    @Test func matchStringsAreKeptAsWritten() throws {
        let rule = try #require(
            onlyRule(
                #"{"id": "m", "match": {"quote": "usd", "future": false, "base": "Btc", "active": true}, "when": {"price": {"above": 1}}}"#
            ))
        #expect(rule.scope == .match(MarketFilter(future: false, quote: "usd", base: "Btc", active: true)))
    }

    @Test func sinksBecomeDefinitionsAndStdoutIsBuiltIn() throws {
        let sinks = """
            {"journal": {"type": "file", "path": "alerts.jsonl"},
             "console": {"type": "stdout", "format": "json"},
             "ops": {"type": "webhook", "urlEnv": "OPS_HOOK", "method": "PUT", "headers": {"X-Team": "markets"},
                     "timeout": "5s", "preset": "slack", "template": "{{message}}", "secretFile": "/run/secret",
                     "caFile": "/etc/ca.pem"},
             "plain": {"type": "webhook", "url": "https://hooks.example.com/x", "secretEnv": "S"},
             "fromFile": {"type": "webhook", "urlFile": "/run/url"},
             "pager": {"type": "exec", "command": ["/usr/local/bin/page", "--team", "markets"], "timeout": "2s"}}
            """
        let set = try #require(
            ruleSet([
                ("r.json", ruleFile(#"{"id": "r", "symbol": "BTC", "when": {"price": {"above": 1}}}"#, sinks: sinks))
            ]))
        #expect(set.sinks.count == 7)
        #expect(set.sinks["stdout"] == .builtinStdout)
        #expect(set.sinks["journal"]?.kind == .file(path: "alerts.jsonl"))
        #expect(set.sinks["console"]?.kind == .stdout(format: .json))
        #expect(
            set.sinks["ops"]?.kind
                == .webhook(
                    WebhookSpec(
                        url: .environment("OPS_HOOK"), method: "PUT", headers: ["X-Team": "markets"], timeout: 5000,
                        preset: "slack",
                        template: "{{message}}", secret: .file("/run/secret"), caFile: "/etc/ca.pem")))
        #expect(
            set.sinks["plain"]?.kind
                == .webhook(WebhookSpec(url: .inline("https://hooks.example.com/x"), secret: .environment("S"))))
        #expect(set.sinks["fromFile"]?.kind == .webhook(WebhookSpec(url: .file("/run/url"))))
        // The exec sink withholds the variables the webhooks read their URL and secret from.
        #expect(
            set.sinks["pager"]?.kind
                == .exec(
                    ExecSpec(
                        command: ["/usr/local/bin/page", "--team", "markets"], timeout: 2000,
                        withheldVariables: ["OPS_HOOK", "S"])))
    }

    @Test func webhookAndExecSinksMayCarryTheirOwnDeliverySettings() throws {
        let sinks = """
            {"ops": {"type": "webhook", "url": "https://x", "concurrency": 8,
                     "retry": {"backoff": "2s", "maxBackoff": "1m", "maxAge": "6h"}},
             "pager": {"type": "exec", "command": ["page"], "retry": {"maxAge": "90s"}},
             "plain": {"type": "webhook", "url": "https://y"}}
            """
        let set = try #require(
            ruleSet([
                ("r.json", ruleFile(#"{"id": "r", "symbol": "BTC", "when": {"price": {"above": 1}}}"#, sinks: sinks))
            ]))
        #expect(
            set.sinks["ops"]?.delivery
                == DeliverySettings(concurrency: 8, backoff: 2_000, maxBackoff: 60_000, maxAge: 21_600_000))
        #expect(set.sinks["pager"]?.delivery == DeliverySettings(maxAge: 90_000))
        #expect(set.sinks["plain"]?.delivery == DeliverySettings())
    }

    @Test func fileMayRedefineStdout() throws {
        let set = try #require(
            ruleSet([
                (
                    "r.json",
                    ruleFile(
                        #"{"id": "r", "symbol": "BTC", "when": {"price": {"above": 1}}}"#,
                        sinks: #"{"stdout": {"type": "stdout", "format": "json"}}"#)
                )
            ]))
        #expect(set.sinks == ["stdout": SinkDefinition(name: "stdout", kind: .stdout(format: .json))])
    }

    @Test func rulesKeepFileThenRuleOrder() throws {
        let a =
            #"{"version": 1, "rules": [{"id": "b", "symbol": "X", "when": {"price": {"above": 1}}}, {"id": "a", "symbol": "X", "when": {"price": {"above": 1}}}]}"#
        let b = #"{"version": 1, "rules": [{"id": "0", "symbol": "X", "when": {"price": {"above": 1}}}]}"#
        #expect(ruleSet([("a.json", a), ("b.json", b)])?.rules.map(\.id) == ["b", "a", "0"])
        #expect(ruleSet([("e.json", #"{"version": 1, "rules": []}"#)])?.rules.count == 0)
    }

    @Test func loadFilesReportsAMissingFileSeparately() {
        let result = RuleLoader.loadFiles(paths: ["/nonexistent/rules.json"])
        #expect(
            result.failureValue
                == .unreadable([UnreadableFile(path: "/nonexistent/rules.json", reason: "No such file or directory")]))
        #expect(
            UnreadableFile(path: "x.json", reason: "Permission denied").description
                == "x.json: error: cannot read file: Permission denied")
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

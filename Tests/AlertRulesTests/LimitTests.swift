import AlertModel
import Foundation
import Testing

@testable import AlertRules

/// Every duration and number key has a largest value (Docs/rules.md, "Limits"): one past it
/// is an error that names the limit, at the value; the limit itself is accepted.
@Suite struct LimitTests {
    /// A rule on line 4 of `r.json` (see `ruleFile`) with `extra` keys after `when`.
    static func rule(_ when: String = #"{"price": {"above": 1}}"#, _ extra: String = "") -> String {
        #"{"id": "a", "symbol": "BTC", "when": "# + when + extra + "}"
    }

    /// The one diagnostic expected for `value` written in `rule` (line 4) or in `sinks` (line 2,
    /// from column 10).
    static func expected(
        _ message: String, at value: String, inRule rule: String? = nil, inSinks sinks: String? = nil
    ) -> [String] {
        if let rule {
            let column = rule.distance(from: rule.startIndex, to: rule.range(of: value)!.lowerBound) + 1
            return ["r.json:4:\(column): error: \(message)"]
        }
        let sinks = sinks!
        let column = sinks.distance(from: sinks.startIndex, to: sinks.range(of: value)!.lowerBound) + 10
        return ["r.json:2:\(column): error: \(message)"]
    }

    static let ruleCases: [(rule: String, value: String, message: String)] = [
        (
            rule(#"{"price": {"above": 1}}"#, #", "cooldown": "106751991167d""#), #""106751991167d""#,
            #"'cooldown' must be at most 365d, found "106751991167d""#
        ),
        (
            rule(#"{"price": {"above": 1}}"#, #", "cooldown": "366d""#), #""366d""#,
            #"'cooldown' must be at most 365d, found "366d""#
        ),
        // Too long for 64 bits is the same mistake, not a misspelt duration.
        (
            rule(#"{"price": {"above": 1}}"#, #", "cooldown": "99999999999999999999d""#), #""99999999999999999999d""#,
            #"'cooldown' must be at most 365d, found "99999999999999999999d""#
        ),
        (rule(#"{"change": {"window": "31d", "above": 5}}"#), #""31d""#, #"'window' must be at most 30d, found "31d""#),
        (
            rule(#"{"change": {"window": "9223372036854775807ms", "above": 5}}"#), #""9223372036854775807ms""#,
            #"'window' must be at most 30d, found "9223372036854775807ms""#
        ),
        (
            rule(#"{"price": {"above": 1}}"#, #", "hysteresis": 100.5"#), "100.5",
            #"'hysteresis' must be at most 100, found 100.5"#
        ),
        (rule(#"{"price": {"above": 1e16}}"#), "1e16", "'above' must be from -1e15 to 1e15, found 1e16"),
        (
            rule(#"{"price": {"crossesBelow": -2e15}}"#), "-2e15",
            "'crossesBelow' must be from -1e15 to 1e15, found -2e15"
        ),
        (
            rule(#"{"price": {"inside": [1, 1e300]}}"#), "1e300",
            "'inside' high bound must be from -1e15 to 1e15, found 1e300"
        ),
        (
            rule(#"{"change": {"window": "1h", "below": -1000001}}"#), "-1000001",
            "'below' must be from -1e6 to 1e6, found -1000001"
        )
    ]

    @Test(arguments: ruleCases)
    func overTheLimitInARule(_ rule: String, _ value: String, _ message: String) {
        #expect(ruleDiagnostics(rule) == Self.expected(message, at: value, inRule: rule))
    }

    static let sinkCases: [(sinks: String, value: String, message: String)] = [
        (
            #"{"pager": {"type": "exec", "command": ["x"], "timeout": "9223372036854775807ms"}}"#,
            #""9223372036854775807ms""#,
            #"'timeout' must be at most 1h, found "9223372036854775807ms""#
        ),
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "timeout": "61m"}}"#, #""61m""#,
            #"'timeout' must be at most 1h, found "61m""#
        ),
        (
            #"{"ops": {"type": "webhook", "url": "https://x", "retry": {"backoff": "2h"}}}"#, #""2h""#,
            #"'backoff' must be at most 1h, found "2h""#
        ),
        (
            #"{"ops": {"type": "exec", "command": ["x"], "retry": {"maxBackoff": "25h"}}}"#, #""25h""#,
            #"'maxBackoff' must be at most 1d, found "25h""#
        ),
        (
            #"{"ops": {"type": "exec", "command": ["x"], "retry": {"maxAge": "31d"}}}"#, #""31d""#,
            #"'maxAge' must be at most 30d, found "31d""#
        )
    ]

    @Test(arguments: sinkCases)
    func overTheLimitInASink(_ sinks: String, _ value: String, _ message: String) {
        #expect(ruleDiagnostics(Self.rule(), sinks: sinks) == Self.expected(message, at: value, inSinks: sinks))
    }

    @Test func defaultsAreBoundedToo() {
        let file = "{\"version\": 1, \"defaults\": {\"cooldown\": \"400d\", \"hysteresis\": 101}, \"rules\": []}"
        #expect(
            diagnostics([("r.json", file)]) == [
                #"r.json:1:41: error: 'cooldown' must be at most 365d, found "400d""#,
                "r.json:1:63: error: 'hysteresis' must be at most 100, found 101"
            ])
    }

    @Test func everyLimitItselfIsAccepted() throws {
        let sinks =
            #"{"pager": {"type": "exec", "command": ["x"], "timeout": "1h", "#
            + #""retry": {"backoff": "1h", "maxBackoff": "1d", "maxAge": "30d"}}}"#
        let rules = [
            #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1e15}}, "cooldown": "365d", "hysteresis": 100, "notify": ["pager"]}"#,
            #"{"id": "b", "symbol": "BTC", "when": {"price": {"outside": [-1e15, 1e15]}}}"#,
            #"{"id": "c", "symbol": "BTC", "when": {"change": {"window": "30d", "below": -1e6}}}"#
        ]
        let file = "{\"version\": 1,\n\"sinks\": \(sinks),\n\"rules\": [\n" + rules.joined(separator: ",\n") + "\n]}"
        let set = try #require(ruleSet([("r.json", file)]))
        #expect(set.rules.map(\.cooldown) == [365 * 86_400_000, 0, 0])
        #expect(set.rules[2].condition == .change(window: 30 * 86_400_000, .below(-1e6)))
        #expect(set.sinks["pager"]?.kind == .exec(ExecSpec(command: ["x"], timeout: 3_600_000)))
        #expect(
            set.sinks["pager"]?.delivery
                == DeliverySettings(backoff: 3_600_000, maxBackoff: 86_400_000, maxAge: 30 * 86_400_000))
    }

    @Test func durationReadingTellsTooLongFromMisspelt() {
        #expect(DurationText.read("1h30m") == .millis(5_400_000))
        #expect(DurationText.read("106751991167d") == .millis(106_751_991_167 * 86_400_000))
        #expect(DurationText.read("106751991168d") == .tooLong)
        #expect(DurationText.read("99999999999999999999ms") == .tooLong)
        #expect(DurationText.read("10 min") == .invalid)
        #expect(DurationText.read("99999999999999999999") == .invalid)
        #expect(DurationText.parse("106751991168d") == nil)
    }

    /// Exec sinks withhold the variables every webhook of every file reads a URL or a secret
    /// from; a file without webhooks leaves them as they are.
    @Test func execSinksWithholdTheWebhookSecretVariables() throws {
        let hooks =
            #"{"version": 1, "sinks": {"ops": {"type": "webhook", "urlEnv": "OPS_URL", "secretEnv": "OPS_SECRET"}, "#
            + #""chat": {"type": "webhook", "url": "https://x", "secretEnv": "CHAT_SECRET"}}, "rules": []}"#
        let pager = #"{"version": 1, "sinks": {"pager": {"type": "exec", "command": ["x"]}}, "rules": []}"#
        let both = try #require(ruleSet([("a.json", pager), ("b.json", hooks)]))
        #expect(
            both.sinks["pager"]?.kind
                == .exec(ExecSpec(command: ["x"], withheldVariables: ["CHAT_SECRET", "OPS_SECRET", "OPS_URL"])))
        let alone = try #require(ruleSet([("a.json", pager)]))
        #expect(alone.sinks["pager"]?.kind == .exec(ExecSpec(command: ["x"])))
    }

    /// `validate /dev/zero` (or any endless or huge file) stops at the limit with an error; a
    /// file of exactly the limit is read whole.
    @Test func aRuleFileIsReadUpToItsLimit() throws {
        let tooLarge = UnreadableFile(path: "/dev/zero", reason: "larger than 1 MiB, the limit for a rule file")
        #expect(RuleLoader.readFile("/dev/zero", limit: 1 << 20) == .failure(tooLarge))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-limit-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bytes = [UInt8](repeating: 0x20, count: 1 << 20)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        #expect(RuleLoader.readFile(path, limit: 1 << 20) == .success(bytes))
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes + [0x20])))
        #expect(
            RuleLoader.readFile(path, limit: 1 << 20)
                == .failure(UnreadableFile(path: path, reason: "larger than 1 MiB, the limit for a rule file")))
    }
}

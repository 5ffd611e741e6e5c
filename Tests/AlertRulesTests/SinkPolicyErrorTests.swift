import AlertModel
import Testing

@testable import AlertRules

/// The policy keys of a sink (Docs/sinks.md#notification-policy): each mistake at its place,
/// as in `SinkErrorTests` (the `sinks` object starts at line 2, column 10 of `r.json`).
@Suite struct SinkPolicyErrorTests {
    static let cases: [(sinks: String, expected: [String])] = [
        // unknown day
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quiet": [{"days": ["mon", "sat", "sunday"], "from": "22:00", "to": "07:00"}]}}"#,
            [#"r.json:2:109: error: unknown day "sunday" in 'days' (use mon, tue, wed, thu, fri, sat, sun)"#]
        ),
        // unknown zone
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quiet": [{"from": "22:00", "to": "07:00", "tz": "Europe/Berlln"}]}}"#,
            [
                #"r.json:2:124: error: unknown time zone "Europe/Berlln" in 'tz' (use an IANA name such as "Europe/Berlin" or "UTC")"#
            ]
        ),
        // time not HH:MM
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quiet": [{"from": "22h", "to": "07:00"}]}}"#,
            [#"r.json:2:94: error: 'from' must be a time of day "HH:MM" from "00:00" to "23:59", found "22h""#]
        ),
        // time out of range
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quiet": [{"from": "22:00", "to": "24:00"}]}}"#,
            [#"r.json:2:109: error: 'to' must be a time of day "HH:MM" from "00:00" to "23:59", found "24:00""#]
        ),
        // time a number
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quiet": [{"from": 22, "to": "07:00"}]}}"#,
            [#"r.json:2:94: error: 'from' must be a string, found number"#]
        ),
        // window without to
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quiet": [{"from": "22:00"}]}}"#,
            [#"r.json:2:85: error: missing required key 'to'"#]
        ),
        // quiet not an array
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quiet": {"from": "22:00", "to": "07:00"}}}"#,
            [#"r.json:2:84: error: 'quiet' must be an array, found object"#]
        ),
        // unknown window key
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quiet": [{"from": "22:00", "to": "07:00", "zone": "UTC"}]}}"#,
            [#"r.json:2:118: error: unknown key 'zone'"#]
        ),
        // quietAction
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quietAction": "mute"}}"#,
            [#"r.json:2:90: error: 'quietAction' must be "hold" or "drop", found "mute""#]
        ),
        // group window zero
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "group": {"window": "0s"}}}"#,
            [#"r.json:2:95: error: 'window' must be longer than 0s"#]
        ),
        // group without window
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "group": {"max": 10}}}"#,
            [#"r.json:2:84: error: missing required key 'window'"#]
        ),
        // group max too small
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "group": {"window": "1m", "max": 1}}}"#,
            [#"r.json:2:108: error: 'max' must be a whole number from 2 to 1000"#]
        ),
        // group max too large
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "group": {"window": "1m", "max": 1001}}}"#,
            [#"r.json:2:108: error: 'max' must be a whole number from 2 to 1000"#]
        ),
        // unknown by field
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "group": {"window": "1m", "by": ["rule", "sym"]}}}"#,
            [#"r.json:2:116: error: each field in 'by' must be one of "rule", "symbol", "condition", found "sym""#]
        ),
        // rate count zero
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "rate": {"count": 0, "per": "1s"}}}"#,
            [#"r.json:2:93: error: 'count' must be a whole number from 1 to 1000000"#]
        ),
        // rate per zero
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "rate": {"count": 1, "per": "0s"}}}"#,
            [#"r.json:2:103: error: 'per' must be longer than 0s"#]
        ),
        // rate per negative
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "rate": {"count": 1, "per": "-1s"}}}"#,
            [#"r.json:2:103: error: 'per' is not a valid duration: "-1s" (use e.g. "90s", "10m", "1h30m", "1d")"#]
        ),
        // unknown fallback
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "fallback": "mial"}, "mail": {"type": "file", "path": "dead.jsonl"}}"#,
            [#"r.json:2:87: error: unknown sink 'mial' in 'fallback' (did you mean 'mail'?)"#]
        ),
        // fallback to itself
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "fallback": "tg"}}"#,
            [#"r.json:2:87: error: fallback cycle: 'tg' → 'tg'"#]
        ),
        // fallback cycle
        (
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "fallback": "ops"}, "ops": {"type": "exec", "command": ["page"], "fallback": "tg"}}"#,
            [#"r.json:2:152: error: fallback cycle: 'ops' → 'tg' → 'ops'"#]
        ),
        // rate on a file sink
        (
            #"{"log": {"type": "file", "path": "a.jsonl", "rate": {"count": 1, "per": "1s"}}}"#,
            [#"r.json:2:54: error: unknown key 'rate' (did you mean 'path'?)"#]
        )
    ]

    @Test(arguments: cases)
    func reportsTheMistakeAtItsPlace(sinks: String, expected: [String]) {
        let rule = #"{"id": "r1", "symbol": "BTC", "when": {"price": {"above": 1}}}"#
        #expect(ruleDiagnostics(rule, sinks: sinks, version: 2) == expected)
    }

    @Test func aSinkWithEveryPolicyKeyIsRead() throws {
        let sinks = #"""
            {"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram",
                    "quiet": [{"days": ["fri", "sat"], "from": "22:30", "to": "07:00", "tz": "Europe/Berlin"}, {"from": "12:00", "to": "13:00"}],
                    "quietAction": "drop", "group": {"window": "2m", "by": ["symbol", "rule"], "max": 20},
                    "rate": {"count": 20, "per": "1m"}, "fallback": "mail"},
             "mail": {"type": "file", "path": "dead.jsonl", "group": {"window": "10m"}}}
            """#
        let rule = #"{"id": "r1", "symbol": "BTC", "when": {"price": {"above": 1}}, "notify": ["tg"]}"#
        let set = try #require(ruleSet([("r.json", ruleFile(rule, sinks: sinks, version: 2))]))
        let policy = try #require(set.sinks["tg"]).policy
        #expect(
            policy
                == SinkPolicy(
                    quiet: [
                        QuietWindowSpec(days: [.fri, .sat], from: 22 * 60 + 30, to: 7 * 60, zone: "Europe/Berlin"),
                        QuietWindowSpec(from: 12 * 60, to: 13 * 60)
                    ],
                    quietAction: .drop, group: GroupSpec(window: 120_000, by: [.symbol, .rule], max: 20),
                    rate: RateSpec(count: 20, per: 60_000), fallback: "mail"))
        #expect(set.sinks["mail"]?.policy == SinkPolicy(group: GroupSpec(window: 600_000)))
    }

    @Test func aFallbackMayNameASinkOfAnotherFile() {
        let first =
            "{\"version\": 2, \"sinks\": {\"ops\": {\"type\": \"exec\", \"command\": [\"page\"], \"fallback\": \"log\"}}, \"rules\": []}"
        let second =
            "{\"version\": 1, \"sinks\": {\"log\": {\"type\": \"file\", \"path\": \"a.jsonl\"}}, \"rules\": []}"
        #expect(diagnostics([("a.json", first), ("b.json", second)]) == [])
    }

    /// The policy keys are keys of version 2 files: in a version 1 file each is an error at the
    /// key that names the version, as every other version 2 key is.
    @Test func policyKeysNeedVersionTwo() {
        let sinks =
            #"{"tg": {"type": "webhook", "urlEnv": "TG", "preset": "telegram", "quietAction": "drop", "rate": {"count": 1, "per": "1s"}}}"#
        let rule = #"{"id": "r1", "symbol": "BTC", "when": {"price": {"above": 1}}}"#
        #expect(
            ruleDiagnostics(rule, sinks: sinks, version: 1) == [
                #"r.json:2:75: error: 'quietAction' needs "version": 2"#,
                #"r.json:2:98: error: 'rate' needs "version": 2"#
            ])
    }
}

import AlertTestSupport
import Foundation
import Testing

/// The built binary against values and inputs past every limit: huge durations, endless rule
/// files, hostile keys, long tick lines on a pipe, notifiers that leave processes behind or
/// look for secrets.
@Suite("end to end: limits", .programs)
struct LimitsTests {
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-limits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func write(_ text: String, to name: String, in dir: URL) throws {
        try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func script(_ body: String, to name: String, in dir: URL) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try write("#!/bin/sh\n" + body, to: name, in: dir)
        #expect(chmod(path, 0o755) == 0)
        return path
    }

    static let ticks =
        "{\"time\": 1700000000000, \"symbol\": \"BTC\", \"price\": 101}\n"
        + "{\"time\": 1700000001000, \"symbol\": \"BTC\", \"price\": 99}\n"
        + "{\"time\": 1700000002000, \"symbol\": \"BTC\", \"price\": 101}\n"

    /// `validate` accepted this cooldown and `replay` then crashed on its second firing.
    @Test func aCooldownPastItsLimitIsAnErrorNotACrash() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(
            """
            {"version": 1, "rules": [
            {"id": "a", "symbol": "BTC", "when": {"price": {"above": 100}}, "cooldown": "106751991167d"}
            ]}
            """, to: "r.json", in: dir)
        try write(Self.ticks, to: "t.jsonl", in: dir)
        let expected = "r.json:2:77: error: 'cooldown' must be at most 365d, found \"106751991167d\"\n"
        let validate = try await PriceAlertBinary.run(["validate", "r.json"], in: dir)
        #expect(validate.status == 65)
        #expect(validate.stderr == expected)
        let replay = try await PriceAlertBinary.run(["replay", "--rules", "r.json", "--ticks", "t.jsonl"], in: dir)
        #expect(replay.status == 65)
        #expect(replay.stderr == expected)
    }

    @Test func anEndlessRuleFileStopsAtTheLimit() async throws {
        let result = try await PriceAlertBinary.run(["validate", "/dev/zero"])
        #expect(result.status == 66)
        #expect(result.stderr == "/dev/zero: error: cannot read file: larger than 128 MiB, the limit for a rule file\n")
    }

    /// Keys and names with newlines and escape codes, and a 10 MB key: one short line each.
    @Test func hostileKeysPrintOneCleanLineEach() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let huge = String(repeating: "k", count: 10_000_000)
        try write(
            "{\"version\": 1, \"rules\": [\n"
                + #"{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}}, "x\nr.json:9:9: error: forged": 1, "notify": ["\u001b[2J\u001b[31mops"]}"#
                + "\n], \"" + huge + "\": 1}\n", to: "r.json", in: dir)
        let result = try await PriceAlertBinary.run(["validate", "r.json"], in: dir)
        #expect(result.status == 65)
        #expect(
            result.stderr == """
                r.json:2:63: error: unknown key 'x\\nr.json:9:9: error: forged'
                r.json:2:109: error: unknown sink '\\u001b[2J\\u001b[31mops' in 'notify'
                r.json:3:4: error: unknown key '\(String(repeating: "k", count: 80))…'

                """)
        #expect(!result.stderr.utf8.contains(0x1B))
    }

    @Test func aSinkNameGivenOnTheCommandLineIsEscaped() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(#"{"version": 1, "rules": []}"#, to: "r.json", in: dir)
        let result = try await PriceAlertBinary.run(["sinks", "test", "ops\n\u{1B}[31m", "--rules", "r.json"], in: dir)
        #expect(result.status == 64)
        #expect(result.stderr == "pricealert: error: no sink named 'ops\\n\\u001b[31m'; known sinks: 'stdout'\n")
    }

    /// The variables named by `urlEnv` and `secretEnv` (of any file) never reach a notifier.
    @Test func notifiersDoNotInheritWebhookSecrets() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notifier = try script("env > \"$1/env\"\n", to: "notify.sh", in: dir)
        try write(
            """
            {"version": 1, "sinks": {"pager": {"type": "exec", "command": ["\(notifier)", "\(dir.path)"]}}, "rules": []}
            """, to: "pager.json", in: dir)
        try write(
            """
            {"version": 1, "sinks": {"ops": {"type": "webhook", "urlEnv": "LIMITS_OPS_URL", "secretEnv": "LIMITS_OPS_SECRET"}}, "rules": []}
            """, to: "hooks.json", in: dir)
        let environment = [
            "LIMITS_OPS_URL": "https://hooks.example.com/T0KEN", "LIMITS_OPS_SECRET": "whsec_c2VjcmV0",
            "LIMITS_HARMLESS": "kept"
        ]
        let result = try await PriceAlertBinary.run(
            ["sinks", "test", "pager", "--rules", "pager.json", "--rules", "hooks.json"],
            in: dir, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let seen = try String(contentsOf: dir.appendingPathComponent("env"), encoding: .utf8)
        #expect(!seen.contains("T0KEN"))
        #expect(!seen.contains("whsec_"))
        #expect(seen.contains("LIMITS_HARMLESS=kept\n"))
    }

    /// The source API keys pricealert reads never reach a notifier, with or without webhooks.
    @Test func notifiersDoNotInheritSourceAPIKeys() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notifier = try script("env > \"$1/env\"\n", to: "notify.sh", in: dir)
        try write(
            """
            {"version": 1, "sinks": {"pager": {"type": "exec", "command": ["\(notifier)", "\(dir.path)"]}}, "rules": []}
            """, to: "pager.json", in: dir)
        let environment = [
            "COINGECKO_API_KEY": "CG-k3y-for-the-test", "COINRANKING_API_KEY": "cr-k3y-for-the-test",
            "NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000",
            "LIMITS_HARMLESS": "kept"
        ]
        let result = try await PriceAlertBinary.run(
            ["sinks", "test", "pager", "--rules", "pager.json"],
            in: dir, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let seen = try String(contentsOf: dir.appendingPathComponent("env"), encoding: .utf8)
        #expect(!seen.contains("k3y-for-the-test"))
        #expect(!seen.contains("_API_KEY="))
        #expect(!seen.contains("NOTIFY_SOCKET=") && !seen.contains("WATCHDOG_USEC="))
        #expect(seen.contains("LIMITS_HARMLESS=kept\n"))
    }

    /// A notifier still running when `check` gives up waiting, and what it started, end with
    /// pricealert (the alert stays in the outbox for the next run).
    @Test func notifiersRunningAtExitAreStopped() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notifier = try script(
            "echo $$ > \"$1/pid.tmp\"\nsleep 1000 &\necho $! > \"$1/child\"\nmv \"$1/pid.tmp\" \"$1/pid\"\nwait\n",
            to: "notify.sh", in: dir)
        try write(
            """
            {"version": 1, "sinks": {"pager": {"type": "exec", "command": ["\(notifier)", "\(dir.path)"], "timeout": "1h"}},
             "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 100}}, "notify": ["pager"]}]}
            """, to: "r.json", in: dir)
        try write(Self.ticks, to: "t.jsonl", in: dir)
        let result = try await PriceAlertBinary.run(
            [
                "check", "--rules", "r.json", "--ticks", "t.jsonl", "--state", "st",
                "--drain-timeout", "10s"
            ], in: dir)
        #expect(result.status == 74, "\(result.stderr)")
        let pid = try #require(
            Int32(
                try String(contentsOf: dir.appendingPathComponent("pid"), encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        let child = try #require(
            Int32(
                try String(contentsOf: dir.appendingPathComponent("child"), encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try await ChildProcesses.waitUntilGone(pid), "the notifier outlived pricealert")
        #expect(try await ChildProcesses.waitUntilGone(child), "the notifier's child outlived pricealert")
        // Nor was another notifier started while pricealert was exiting.
        for other in ChildProcesses.mentioning(dir.path) {
            #expect(try await ChildProcesses.waitUntilGone(other), "notifier \(other) outlived pricealert")
        }
    }

    /// A 20 MB tick line arriving through a pipe (short reads) is read whole.
    @Test func aLongTickLineFromAPipe() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(
            #"{"version": 1, "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 100}}}]}"#,
            to: "r.json", in: dir)
        let long =
            "{\"time\": 1700000000000, \"symbol\": \"BTC\", \"note\": \"" + String(repeating: "n", count: 20_000_000)
            + "\", \"price\": 101}\n"
        try write(
            long + "{\"time\": 1700000001000, \"symbol\": \"BTC\", \"price\": 99}\n"
                + "{\"time\": 1700000002000, \"symbol\": \"BTC\", \"price\": 102}\n", to: "t.jsonl", in: dir)
        let result = try await ObservedProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "cat t.jsonl | \"$0\" replay --rules r.json --ticks - --format json", PriceAlertBinary.url.path],
            in: dir)
        #expect(result.status == 0)
        let text = result.stdout
        #expect(text.split(separator: "\n").count == 2)
        #expect(text.contains("\"id\":\"a:BTC:1700000000000\""))
        #expect(text.contains("\"id\":\"a:BTC:1700000002000\""))
    }
}

import AlertTestSupport
import Foundation
import Testing

/// What a new user meets in the first hour, with the built binary: a busy port named plainly,
/// one way to write `--interval`, help that tells what `replay --dispatch` does with time.
@Suite("end to end: a first hour that works", .programs)
struct FirstHourTests {
    func tempFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-first-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A port another program holds: `cannot listen on HOST:PORT: address already in use`, exit
    /// 69, for `exchange --port`, `run --listen` and `demo --listen` alike; no errno, no syscall.
    @Test func aPortInUseIsNamedPlainlyAndExits69() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"{"version": 1, "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"above": 1}}}]}"#
            .write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let holder = try PriceAlertBinary.start(["exchange", "--port", "0"])
        let ready = try await holder.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 60)
        let port = try #require(ready.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let commands: [(arguments: [String], prefix: String)] = [
            (["exchange", "--port", "\(port)"], "exchange: error: "),
            (
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:9", "--listen",
                    "127.0.0.1:\(port)"
                ],
                "pricealert: error: "
            ),
            (["demo", "--listen", "127.0.0.1:\(port)"], "pricealert: error: ")
        ]
        for command in commands {
            let result = try await PriceAlertBinary.run(command.arguments, in: dir, timeout: 120)
            #expect(result.status == 69, "\(command.arguments): \(result.stderr)")
            let line = "\(command.prefix)cannot listen on 127.0.0.1:\(port): address already in use"
            #expect(
                result.stderr.components(separatedBy: "\n").contains(line), "\(command.arguments): \(result.stderr)")
            #expect(!result.stderr.contains("errno") && !result.stderr.contains("bind("), "\(result.stderr)")
        }
        #expect(try await holder.stop(signal: SIGTERM) == 0)
    }

    /// `demo --rules` with rules that name a file sink: their alerts are on standard output, as
    /// the help says, and in the file too.
    @Test func demoWithRuleFilesPrintsTheirAlerts() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"""
        {"version": 1, "sinks": {"journal": {"type": "file", "path": "alerts.jsonl"}},
         "defaults": {"notify": ["journal"]},
         "rules": [{"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}}]}
        """#.write(to: dir.appendingPathComponent("mine.json"), atomically: true, encoding: .utf8)
        let running = try PriceAlertBinary.start(["demo", "--rules", "mine.json", "--interval", "200ms"], in: dir)
        let line = try await running.waitForStdoutLine(containing: "btc-listed", timeout: 60)
        #expect(line.contains("BTC"))
        #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
        let journal = try String(contentsOf: dir.appendingPathComponent("alerts.jsonl"), encoding: .utf8)
        #expect(journal.contains("\"btc-listed\""), "\(journal)")
        let help = try await PriceAlertBinary.run(["demo", "--help"])
        #expect(
            help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains(
                "Every alert is printed on standard output"))
    }

    /// `--interval` is a duration in `exchange` as in `demo`; a bare number is refused by both.
    @Test(arguments: ["exchange", "demo"])
    func intervalIsADurationInExchangeAndDemo(command: String) async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = command == "exchange" ? ["--port", "0"] : []
        let running = try PriceAlertBinary.start([command, "--interval", "200ms"] + port, in: dir)
        if command == "exchange" {
            _ = try await running.waitForStderrLine(containing: "exchange: listening on", timeout: 60)
        } else {
            _ = try await running.waitForStdoutLine(containing: "[demo-", timeout: 60)
        }
        #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
        let bare = try await PriceAlertBinary.run([command, "--interval", "0.5"] + port, in: dir)
        #expect(bare.status == 64)
        #expect(bare.stderr.contains("--interval"), "\(bare.stderr)")
        let help = try await PriceAlertBinary.run([command, "--help"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("publishes prices (e.g. 1s, 200ms)"), "\(help.stdout)")
    }

    /// `replay --dispatch` is a delivery, paced by the wall clock, not a preview: its help says so
    /// and where to look instead.
    @Test func replayHelpSaysDispatchIsNoPreviewOfWhen() async throws {
        let help = try await PriceAlertBinary.run(["replay", "--help"])
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("--dispatch delivers now; it is no preview of when"), "\(help.stdout)")
        #expect(text.contains("go by the wall clock"))
        #expect(text.contains("--report"))
    }
}

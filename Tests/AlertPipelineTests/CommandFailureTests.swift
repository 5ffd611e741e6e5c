import AlertModel
import AlertPipeline
import Foundation
import Testing

/// `check` and `replay` as the pipeline runs them: what ends them early comes back as a
/// `CommandFailure` (the exit status and what to say), never as an exit of the process.
@Suite("check and replay: failures with their exit status")
struct CommandFailureTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("command-failure-\(UUID().uuidString)")
        .path

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sinks = #""sinks": {"journal": {"type": "file", "path": "\#(folder)/alerts.jsonl"}}"#
        try
            #"{"version": 1, \#(sinks), "defaults": {"notify": ["journal"]}, "rules": [{"id": "btc-high", "symbol": "BTC", "when": {"price": {"above": 100}}}]}"#
            .write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
    }

    func check(rules: String, ticks: String?, state: String) -> CheckRun.Request {
        CheckRun.Request(
            rules: [rules], source: nil, endpoint: nil, ticks: ticks, history: nil, markets: [],
            marketsEvery: .seconds(3600), format: nil, drainTimeout: .seconds(1), state: state,
            maxTickSkew: .seconds(300))
    }

    /// The failure `body` throws, if it is a `CommandFailure`.
    func failure(_ body: () async throws -> Void) async -> CommandFailure? {
        do {
            try await body()
            return nil
        } catch {
            return error as? CommandFailure
        }
    }

    @Test func aMissingRuleFileIsNoInputNamingIt() async {
        let request = check(rules: folder + "/missing.json", ticks: folder + "/ticks.jsonl", state: folder + "/st")
        let failure = await failure { _ = try await CheckRun.check(request) }
        #expect(failure?.status == .noInput)
        #expect(failure?.lines.count == 1)
        #expect(failure?.lines.first?.hasPrefix(folder + "/missing.json: error: cannot read file") == true)
        // Nothing was created for a run that loaded no rules.
        #expect(!FileManager.default.fileExists(atPath: folder + "/st"))
    }

    @Test func noPricesIsAUsageError() async {
        let request = check(rules: folder + "/rules.json", ticks: nil, state: folder + "/st")
        let failure = await failure { _ = try await CheckRun.check(request) }
        #expect(failure?.status == .usage)
        #expect(failure?.lines.first?.hasPrefix("pricealert: error: no prices to check") == true)
    }

    @Test func aLockedStateFolderIsTempFail() async throws {
        try #"{"time": 1700000000000, "symbol": "BTC", "price": 101}"#.write(
            toFile: folder + "/ticks.jsonl", atomically: true, encoding: .utf8)
        let held = try CheckRun.openStore(state: folder + "/st").get()
        defer { held.close() }
        let request = check(rules: folder + "/rules.json", ticks: folder + "/ticks.jsonl", state: folder + "/st")
        let failure = await failure { _ = try await CheckRun.check(request) }
        #expect(failure?.status == .tempFail)
        #expect(failure?.lines.first?.contains("is in use by another pricealert") == true)
    }

    @Test func aCheckThatEndsWellCountsItsAlerts() async throws {
        try #"{"time": 1700000000000, "symbol": "BTC", "price": 101}"#.write(
            toFile: folder + "/ticks.jsonl", atomically: true, encoding: .utf8)
        let request = check(rules: folder + "/rules.json", ticks: folder + "/ticks.jsonl", state: folder + "/st")
        #expect(try await CheckRun.check(request) == 1)
        let written = try String(contentsOfFile: folder + "/alerts.jsonl", encoding: .utf8)
        #expect(written.split(separator: "\n").count == 1)
        #expect(written.contains(#""rule":"btc-high""#))
    }

    @Test func anUnreadableTickFileEndsAReplayWithNoInput() async {
        let request = ReplayRun.Request(
            rules: [folder + "/rules.json"], ticks: folder + "/nothing.jsonl", history: nil, markets: [],
            format: .text, report: nil, dispatch: false, state: nil)
        let failure = await failure { try await ReplayRun.replay(request) }
        #expect(failure?.status == .noInput)
        #expect(failure?.lines == ["pricealert: error: cannot open \(folder)/nothing.jsonl: No such file or directory"])
    }
}

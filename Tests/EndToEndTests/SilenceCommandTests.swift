import AlertTestSupport
import Foundation
import Testing

/// `pricealert silence add|list|expire` as users run them: the built binary, a temporary state folder.
@Suite("end to end: silence commands", .programs)
struct SilenceCommandTests {
    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-silence-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func addListAndExpire() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let add = try await PriceAlertBinary.run(
            [
                "silence", "add", "--rule", "btc-*", "--symbol", "btc-usd", "--for", "2h",
                "--comment", "crash day", "--state", "st"
            ], in: dir)
        #expect(add.status == 0, "\(add.stderr)")
        let id = add.stdout.trimmingCharacters(in: .newlines)
        #expect(id.count == 12 && id.allSatisfy(\.isHexDigit))
        let later = try await PriceAlertBinary.run(
            [
                "silence", "add", "--from", "2099-01-01T00:00:00Z", "--until", "2099-01-02T00:00:00+01:00",
                "--state", "st"
            ], in: dir)
        #expect(later.status == 0, "\(later.stderr)")
        let laterID = later.stdout.trimmingCharacters(in: .newlines)

        let file = dir.appendingPathComponent("st/silences.sqlite").path
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let json = try await PriceAlertBinary.run(["silence", "list", "--state", "st", "--format", "json"], in: dir)
        #expect(json.status == 0)
        let listed = lines(json.stdout)
        #expect(listed.count == 2)
        #expect(listed.first?["id"] as? String == id)
        #expect(listed.first?["rule"] as? String == "btc-*")
        #expect(listed.first?["symbol"] as? String == "BTC-USD")
        #expect(listed.first?["state"] as? String == "active")
        #expect(listed.first?["comment"] as? String == "crash day")
        #expect(listed.last?["id"] as? String == laterID)
        #expect(listed.last?["state"] as? String == "pending")
        #expect(listed.last?["from"] as? String == "2099-01-01T00:00:00.000Z")
        #expect(listed.last?["until"] as? String == "2099-01-01T23:00:00.000Z")

        let expire = try await PriceAlertBinary.run(["silence", "expire", id, "--state", "st"], in: dir)
        #expect(expire.status == 0, "\(expire.stderr)")
        #expect(expire.stderr.hasPrefix("silence \(id) expired at "))
        let text = try await PriceAlertBinary.run(["silence", "list", "--state", "st"], in: dir)
        #expect(text.status == 0)
        let textLines = text.stdout.split(separator: "\n")
        #expect(textLines.count == 3)
        #expect(textLines[0].hasPrefix("\(id)  expired  rule btc-*  symbol BTC-USD  "))
        #expect(textLines[0].hasSuffix("\"crash day\""))
        #expect(textLines[1].hasPrefix("\(laterID)  pending  "))
        #expect(textLines[2] == "1 in force, 2 in all")
    }

    @Test func worksWhileAnotherPricealertHoldsTheStateLock() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lock = try StateLockHolder(folder: dir.appendingPathComponent("st"))
        defer { lock.release() }

        let add = try await PriceAlertBinary.run(["silence", "add", "--for", "10m", "--state", "st"], in: dir)
        #expect(add.status == 0, "\(add.stderr)")
        let id = add.stdout.trimmingCharacters(in: .newlines)
        let list = try await PriceAlertBinary.run(["silence", "list", "--state", "st", "--format", "json"], in: dir)
        #expect(lines(list.stdout).map { $0["id"] as? String } == [id])
        #expect(try await PriceAlertBinary.run(["silence", "expire", id, "--state", "st"], in: dir).status == 0)
        // The folder was held all along.
        #expect(try await PriceAlertBinary.run(["outbox", "purge", "--dead", "--state", "st"], in: dir).status == 75)
    }

    @Test(arguments: [
        (
            ["--rule", "btc[12]", "--for", "1h"],
            "pricealert: error: --rule: pattern \"btc[12]\" holds '['; only '*' and '?' are wildcards"
        ),
        (["--symbol", "", "--for", "1h"], "pricealert: error: --symbol: pattern \"\" is empty"),
        (
            ["--for", "soon"],
            "pricealert: error: --for \"soon\" is not a duration longer than 0s (use e.g. \"90m\", \"2h\", \"1d\")"
        ),
        (
            ["--until", "tomorrow"],
            "pricealert: error: --until \"tomorrow\" is not a time: write it as RFC 3339, e.g. 2026-11-24T22:00:00Z or 2026-11-24T23:00:00+01:00"
        ),
        (["--for", "1h", "--until", "2099-01-01T00:00:00Z"], "pricealert: error: give exactly one of --for or --until"),
        ([String](), "pricealert: error: give exactly one of --for or --until"),
        (
            ["--from", "2099-01-02T00:00:00Z", "--until", "2099-01-01T00:00:00Z"],
            "pricealert: error: the silence ends (2099-01-01T00:00:00.000Z) before it starts (2099-01-02T00:00:00.000Z)"
        )
    ])
    func badArgumentsAreUsageErrors(arguments: [String], message: String) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let add = try await PriceAlertBinary.run(["silence", "add"] + arguments + ["--state", "st"], in: dir)
        #expect(add.status == 64)
        #expect(add.stderr == message + "\n")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("st/silences.sqlite").path))
    }

    @Test func expiringAnUnknownIdSaysSo() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let expire = try await PriceAlertBinary.run(["silence", "expire", "0123456789ab", "--state", "st"], in: dir)
        #expect(expire.status == 64)
        #expect(
            expire.stderr
                == "pricealert: error: no silence \"0123456789ab\" in st/silences.sqlite (see pricealert silence list)\n"
        )
    }
}

/// Silences in `replay` and `check`: a silenced event is listed with `"silenced": "ID"` and
/// sent to no sink; the others are delivered as before.
@Suite("end to end: silenced events", .programs)
struct SilencedEventTests {
    /// From the second tick on: of `DispatchTests`' two alerts (at …01000 and …03000), the second.
    static let from = "2023-11-14T22:13:22Z"

    func silence(in dir: URL) async throws -> String {
        let add = try await PriceAlertBinary.run(
            [
                "silence", "add", "--rule", "u?", "--symbol", "btc", "--from", Self.from,
                "--until", "2099-01-01T00:00:00Z", "--state", "st"
            ], in: dir)
        #expect(add.status == 0, "\(add.stderr)")
        return add.stdout.trimmingCharacters(in: .newlines)
    }

    @Test func replayListsItMarkedAndDoesNotSendIt() async throws {
        let dir = try DispatchTests().folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        let id = try await silence(in: dir)
        let replay = try await PriceAlertBinary.run(
            [
                "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--format", "json",
                "--dispatch", "--state", "st"
            ], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        let listed = replay.stdout.split(separator: "\n").map(String.init)
        #expect(listed.count == 2)
        #expect(listed[0].hasPrefix(#"{"id":"up:BTC:1700000001000""#) && !listed[0].contains("silenced"))
        #expect(listed[1].hasPrefix(#"{"id":"up:BTC:1700000003000""#) && listed[1].hasSuffix(#","silenced":"\#(id)"}"#))
        let journal = try String(contentsOf: dir.appendingPathComponent("out/alerts.jsonl"), encoding: .utf8)
        #expect(journal == listed[0] + "\n")
    }

    /// Last week's replay with a silence over last week: the silence has ended, so `add` takes
    /// it with a note, and the replay's event in its interval goes to no sink.
    @Test func aSilenceThatEndedInThePastSilencesAReplayOfItsTime() async throws {
        let dir = try DispatchTests().folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        let add = try await PriceAlertBinary.run(
            [
                "silence", "add", "--rule", "u?", "--symbol", "btc", "--from", Self.from,
                "--until", "2023-11-15T00:00:00Z", "--state", "st"
            ], in: dir)
        #expect(add.status == 0, "\(add.stderr)")
        let id = add.stdout.trimmingCharacters(in: .newlines)
        #expect(id.count == 12)
        #expect(
            add.stderr
                == "pricealert: note: silence \(id) ended in the past (2023-11-15T00:00:00.000Z): it matches only events before then, as in a replay --dispatch of that time, and no live alert\n"
        )
        let list = try await PriceAlertBinary.run(["silence", "list", "--state", "st", "--format", "json"], in: dir)
        #expect(list.stdout.contains(#""state":"expired""#), "\(list.stdout)")
        let replay = try await PriceAlertBinary.run(
            [
                "replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--format", "json",
                "--dispatch", "--state", "st"
            ], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        let listed = replay.stdout.split(separator: "\n").map(String.init)
        #expect(listed.count == 2)
        #expect(listed.count == 2 && listed[1].hasSuffix(#","silenced":"\#(id)"}"#))
        let journal = try String(contentsOf: dir.appendingPathComponent("out/alerts.jsonl"), encoding: .utf8)
        #expect(journal == (listed.first ?? "") + "\n")
    }

    @Test func checkListsItMarkedAndDoesNotSendIt() async throws {
        let dir = try DispatchTests().folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        let id = try await silence(in: dir)
        let check = try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--format", "text",
                "--state", "st"
            ], in: dir)
        #expect(check.status == 0, "\(check.stderr)")
        let listed = check.stdout.split(separator: "\n").map(String.init)
        #expect(listed.count == 2)
        #expect(listed[1].hasSuffix(" (silenced: \(id))") && !listed[0].contains("silenced"))
        let journal = try String(contentsOf: dir.appendingPathComponent("out/alerts.jsonl"), encoding: .utf8)
        #expect(journal.split(separator: "\n").count == 1 && journal.hasPrefix(#"{"id":"up:BTC:1700000001000""#))
    }
}

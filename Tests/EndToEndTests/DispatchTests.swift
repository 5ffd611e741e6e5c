import AlertTestSupport
import Foundation
import Testing

/// `replay --dispatch` with a real file sink in a temporary folder.
@Suite("end to end: dispatch to sinks", .programs)
struct DispatchTests {
    static let rules = """
        {
          "version": 1,
          "sinks": { "journal": { "type": "file", "path": "out/alerts.jsonl" } },
          "rules": [
            { "id": "up", "symbol": "BTC", "when": { "price": { "crossesAbove": 100 } }, "notify": ["journal"] },
            { "id": "quiet", "symbol": "BTC", "when": { "price": { "below": 1 } }, "notify": ["journal"] }
          ]
        }
        """
    static let ticks = """
        {"time": 1700000000000, "symbol": "BTC", "price": 99}
        {"time": 1700000001000, "symbol": "BTC", "price": 101}
        {"time": 1700000002000, "symbol": "BTC", "price": 98}
        {"time": 1700000003000, "symbol": "BTC", "price": 102.5}

        """

    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Self.rules.write(to: url.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try Self.ticks.write(to: url.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        return url
    }

    /// `long.jsonl`: `count` BTC ticks at 99.5 and 100.5 in turn, so `up` fires on every other.
    func writeCrossings(_ count: Int, in dir: URL) throws {
        let ticks = (0..<count).map { i in
            #"{"time": \#(1_700_000_000_000 + Int64(i) * 1_000), "symbol": "BTC", "price": \#(i % 2 == 0 ? 99.5 : 100.5)}"#
        }
        try (ticks.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("long.jsonl"), atomically: true, encoding: .utf8)
    }

    @Test func fileSinkAppendsTheListedEventsWithMode0600() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        let args = ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--format", "json", "--dispatch"]

        let first = try await PriceAlertBinary.run(args, in: dir)
        #expect(first.status == 0)
        let listed = first.stdout.split(separator: "\n").map(String.init)
        #expect(listed.count == 2)
        #expect(listed.first?.hasPrefix(#"{"id":"up:BTC:1700000001000","kind":"alert","rule":"up""#) == true)

        let journal = dir.appendingPathComponent("out/alerts.jsonl")
        #expect(try String(contentsOf: journal, encoding: .utf8) == listed.map { $0 + "\n" }.joined())
        let mode = try FileManager.default.attributesOfItem(atPath: journal.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // A second run appends; nothing that was written is lost or rewritten.
        let second = try await PriceAlertBinary.run(args, in: dir)
        #expect(second.status == 0)
        #expect(try String(contentsOf: journal, encoding: .utf8) == (listed + listed).map { $0 + "\n" }.joined())
    }

    /// A listing many times the 64 KiB the tick loop writes at once: without `--dispatch` (lines
    /// made in the tick loop) it is byte for byte the listing of `--dispatch` (lines made by the
    /// task that dispatches each alert) and the file sink's journal, every alert once, in order.
    @Test func aLongListingIsTheSameWithAndWithoutDispatch() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        // BTC crosses 100 up on every other tick: 3 000 alerts, about 0.9 MB of JSON lines.
        try writeCrossings(6_000, in: dir)
        let args = ["replay", "--rules", "rules.json", "--ticks", "long.jsonl", "--format", "json"]

        let listed = try await PriceAlertBinary.run(args, in: dir)
        let dispatched = try await PriceAlertBinary.run(args + ["--dispatch"], in: dir)
        #expect(listed.status == 0 && dispatched.status == 0)
        let lines = listed.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3_001 && lines.last == "")
        #expect(listed.stdout.utf8.count > 10 * 65_536)
        #expect(Set(lines.dropLast()).count == 3_000)
        #expect(lines.first?.hasPrefix(#"{"id":"up:BTC:1700000001000","#) == true)
        #expect(listed.stdout == dispatched.stdout)
        let journal = try String(contentsOf: dir.appendingPathComponent("out/alerts.jsonl"), encoding: .utf8)
        #expect(journal == listed.stdout)
    }

    /// A file sink whose disk fills part-way (a file size limit, `ulimit -f`, makes writes past
    /// it fail with EFBIG as a full disk fails them with ENOSPC, after a short write that cuts a
    /// line): the journal holds the first lines of the listing, whole and in order, and every
    /// alert not in it is reported failed (exit 74).
    @Test func aFileSinkThatFillsUpKeepsWholeLinesAndReportsTheRest() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        try writeCrossings(2_000, in: dir)
        var environment = ProcessInfo.processInfo.environment
        environment["STATE_DIRECTORY"] = nil
        environment["XDG_STATE_HOME"] = dir.appendingPathComponent("state").path
        // SIGXFSZ ignored, as a signal ignored before exec stays ignored: writes past the limit fail.
        let script = #"trap '' XFSZ; ulimit -f 64 && exec "$0" "$@""#
        let run = try await ObservedProcess(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", script, PriceAlertBinary.url.path, "replay", "--rules", "rules.json",
                "--ticks", "long.jsonl", "--format", "json", "--dispatch"
            ],
            in: dir, environment: environment
        ).wait(timeout: 60)
        #expect(run.status == 74)
        let listed = run.stdout.split(separator: "\n").map { $0 + "\n" }
        #expect(listed.count == 1_000)
        let journal = try String(contentsOf: dir.appendingPathComponent("out/alerts.jsonl"), encoding: .utf8)
        let kept = journal.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(kept > 0 && kept < 1_000)
        #expect(journal == listed.prefix(kept).joined())
        #expect(run.stderr.contains("replay: \(1_000 - kept) deliveries failed"))
        #expect(run.stderr.components(separatedBy: "sink 'journal' failed to deliver").count - 1 == 1_000 - kept)
    }

    @Test func withoutDispatchNoSinkIsTouched() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("out"), withIntermediateDirectories: true)
        let run = try await PriceAlertBinary.run(["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl"], in: dir)
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").count == 2)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/alerts.jsonl").path))
    }

    @Test func missingSinkFolderStopsBeforeEvaluatingAnything() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try await PriceAlertBinary.run(
            ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--dispatch"], in: dir)
        #expect(run.status == 73)
        #expect(run.stdout.isEmpty)
        #expect(
            run.stderr
                == "pricealert: error: file sink 'journal': cannot open out/alerts.jsonl: folder 'out' does not exist\n"
        )
    }
}

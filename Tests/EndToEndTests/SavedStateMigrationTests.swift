import AlertTestSupport
import Foundation
import Testing

/// A state folder saved before the engine kept one model per symbol (symbol states in formats
/// 1–3: indexed pairs and minute history beside a separate series of the version 2 rules and
/// portfolios) restores into today's engine: pair states, histories, highs and lows, `for`
/// starts, reminder counts, move references and event counts carry over, so the next `check`
/// gives exactly the events the saving code gave (Tests/Fixtures/state-before-one-engine).
@Suite("end to end: a state folder saved by the two-engine code", .programs)
struct SavedStateMigrationTests {
    static let fixture = PriceAlertBinary.repo.appendingPathComponent("Tests/Fixtures/state-before-one-engine")

    /// The fixture's rule and tick files in a fresh folder, with the saved state database in `st/`
    /// when `saved` is true.
    func folder(saved: Bool) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("st"), withIntermediateDirectories: true)
        for name in ["rules-v1.json", "rules-v2.json", "history.jsonl", "ticks-1.jsonl", "ticks-2.jsonl"] {
            try FileManager.default.copyItem(
                at: Self.fixture.appendingPathComponent(name), to: dir.appendingPathComponent(name))
        }
        if saved {
            try FileManager.default.copyItem(
                at: Self.fixture.appendingPathComponent("pricealert.sqlite"),
                to: dir.appendingPathComponent("st/pricealert.sqlite"))
        }
        return dir
    }

    func check(_ ticks: String, in dir: URL, _ more: [String] = []) async throws -> [String] {
        let result = try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules-v1.json", "rules-v2.json", "--ticks", ticks, "--state", "st", "--format",
                "json"
            ] + more,
            in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    func expected(_ name: String) throws -> [String] {
        try String(contentsOf: Self.fixture.appendingPathComponent(name), encoding: .utf8).split(separator: "\n").map(
            String.init)
    }

    @Test func theSavedFolderGivesTheEventsTheSavingCodeGave() async throws {
        let dir = try folder(saved: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let events = try await check("ticks-2.jsonl", in: dir)
        let wanted = try expected("alerts-2.jsonl")
        #expect(events.count == wanted.count)
        for (got, want) in zip(events, wanted) where got != want { Issue.record("got \(got)\nwant \(want)") }
        // Numbered ids continue from the saved counts of the millisecond the save ended in.
        #expect(events.contains { $0.contains(#""id":"btc-every-1pct:BTC:1700006370017:2""#) })
    }

    /// The same two checks from an empty folder: today's engine gives what the saving code gave
    /// in both, through its own save and restore in between.
    @Test func todaysSaveAndRestoreGiveTheSameEvents() async throws {
        let dir = try folder(saved: false)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try await check("ticks-1.jsonl", in: dir, ["--history", "history.jsonl"]) == expected("alerts-1.jsonl"))
        #expect(try await check("ticks-2.jsonl", in: dir) == expected("alerts-2.jsonl"))
    }
}

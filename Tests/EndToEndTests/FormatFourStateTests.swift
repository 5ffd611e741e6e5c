import AlertTestSupport
import Foundation
import GRDB
import Testing

/// A state folder saved by the code that wrote symbol states in format 4
/// (Tests/Fixtures/state-format-4, made from the rules and ticks of state-before-one-engine):
/// the next `check` gives the events that code gave, and saves each minute once.
@Suite("end to end: a state folder saved in format 4", .programs)
struct FormatFourStateCommandTests {
    static let fixtures = PriceAlertBinary.repo.appendingPathComponent("Tests/Fixtures")
    static let inputs = fixtures.appendingPathComponent("state-before-one-engine")

    /// Bytes of the symbol states and of the minute history chunks, and the chunks' entries.
    func stored(_ database: URL) throws -> (snapshots: Int, history: Int, entries: Int, tags: Set<UInt8>) {
        try DatabaseQueue(path: database.path).read { db in
            let blobs = try Data.fetchAll(db, sql: "SELECT snapshot FROM symbol_state")
            let chunks = try Data.fetchAll(db, sql: "SELECT entries FROM symbol_history")
            return (
                blobs.reduce(0) { $0 + $1.count }, chunks.reduce(0) { $0 + $1.count },
                chunks.reduce(0) { $0 + ($1.count - 5) / 16 }, Set(blobs.compactMap(\.first))
            )
        }
    }

    @Test func theNextCheckGivesTheSameEventsAndSavesEachMinuteOnce() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("format4-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("st"), withIntermediateDirectories: true)
        for name in ["rules-v1.json", "rules-v2.json", "ticks-2.jsonl"] {
            try FileManager.default.copyItem(
                at: Self.inputs.appendingPathComponent(name), to: dir.appendingPathComponent(name))
        }
        let database = dir.appendingPathComponent("st/pricealert.sqlite")
        try FileManager.default.copyItem(
            at: Self.fixtures.appendingPathComponent("state-format-4/pricealert.sqlite"), to: database)
        let before = try stored(database)
        #expect(before.tags == [4])
        #expect(before.entries >= 3 * 120, "BTC, ETH and SOL each saved their minutes twice")

        let result = try await PriceAlertBinary.run(
            [
                "check", "--rules", "rules-v1.json", "rules-v2.json", "--ticks", "ticks-2.jsonl", "--state", "st",
                "--format", "json"
            ], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        let wanted = try String(contentsOf: Self.inputs.appendingPathComponent("alerts-2.jsonl"), encoding: .utf8)
        #expect(result.stdout == wanted)

        let after = try stored(database)
        #expect(after.tags == [5])
        #expect(after.history == 0 && after.entries == 0)
        // The same keys over a longer stretch (ticks-2 adds 1.5 hours), and still fewer bytes.
        #expect(after.snapshots + after.history < before.snapshots + before.history)
    }
}

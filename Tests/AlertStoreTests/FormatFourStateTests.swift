import AlertEngine
import Foundation
import GRDB
import Testing

@testable import AlertStore

/// A state folder saved in format 4 (Tests/Fixtures/state-format-4): BTC, ETH and SOL are read by
/// indexed change rules and by rules evaluated pair by pair, so each of their minutes was saved
/// twice, in the snapshot's minute buckets and in the hourly history chunks. Loaded, each minute
/// is there once; saved again, the chunks are gone and nothing else is.
@Suite struct FormatFourStateTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/state-format-4/pricealert.sqlite").standardized

    /// Per symbol: the snapshot's format tag and size, and its history chunks' entries and size.
    struct Stored: Equatable {
        var tag: UInt8
        var snapshotBytes: Int
        var historyEntries: Int
        var historyBytes: Int
    }

    /// A fresh state folder holding a copy of the fixture's database.
    static func folderWithFixture() throws -> StateFolder {
        let folder = temporaryFolder()
        try FileManager.default.createDirectory(
            atPath: folder.path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.copyItem(atPath: fixture.path, toPath: folder.databasePath)
        return folder
    }

    static func stored(_ folder: StateFolder) throws -> [String: Stored] {
        try DatabaseQueue(path: folder.databasePath).read { db in
            var out: [String: Stored] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT symbol, snapshot FROM symbol_state") {
                let blob: Data = row[1]
                out[row[0]] = Stored(
                    tag: blob.first ?? 0, snapshotBytes: blob.count, historyEntries: 0, historyBytes: 0)
            }
            for row in try Row.fetchAll(db, sql: "SELECT symbol, entries FROM symbol_history") {
                let chunk: Data = row[1]
                out[row[0], default: Stored(tag: 0, snapshotBytes: 0, historyEntries: 0, historyBytes: 0)]
                    .historyEntries += (chunk.count - 5) / 16
                out[row[0]]!.historyBytes += chunk.count
            }
            return out
        }
    }

    @Test func eachMinuteIsLoadedOnceAndSavedOnce() throws {
        let folder = try Self.folderWithFixture()
        let before = try Self.stored(folder)
        for symbol in ["BTC", "ETH", "SOL"] {
            #expect(before[symbol]?.tag == 4)
            #expect((before[symbol]?.historyEntries ?? 0) > 100, "the fixture's \(symbol) has its history twice")
        }

        let store = try StateStore.open(folder)
        let loaded = try store.engineState.load()
        #expect(loaded.map(\.symbol) == ["@MAIN", "BTC", "ETH", "SOL"])
        // The chunks' minutes went into the buckets: none is left beside them.
        #expect(loaded.allSatisfy { $0.minutes.isEmpty && $0.prices.isEmpty })
        try store.engineState.save(loaded, now: 1)
        store.close()

        let after = try Self.stored(folder)
        for symbol in ["@MAIN", "BTC", "ETH", "SOL"] {
            let (old, new) = (try #require(before[symbol]), try #require(after[symbol]))
            #expect(new.tag == 5)
            #expect(new.historyEntries == 0 && new.historyBytes == 0)
            // The snapshot keeps its buckets; only the empty history's count (4 bytes) goes.
            #expect(new.snapshotBytes == old.snapshotBytes - 4)
        }
        let total = { (s: [String: Stored]) in s.values.reduce(0) { $0 + $1.snapshotBytes + $1.historyBytes } }
        #expect(total(after) < total(before) - 3 * 16 * 100)

        // What was saved is what was loaded, each minute once.
        let reopened = try StateStore.open(folder)
        defer { reopened.close() }
        #expect(try reopened.engineState.load() == loaded)
    }

    /// `check` reads only what its ticks look up (`load(lookingUp:)`): the hours of the chunks it
    /// reads go into the buckets too, and the save drops every chunk of those keys.
    @Test func aPartialLoadMergesTheChunksItReads() throws {
        let folder = try Self.folderWithFixture()
        let store = try StateStore.open(folder)
        let full = try store.engineState.load()
        let partial = try store.engineState.load(lookingUp: ["BTC": [28_333_380...28_333_390]])
        #expect(partial == full.filter { $0.symbol == "BTC" })
        try store.engineState.save(partial, now: 1)
        store.close()
        let after = try Self.stored(folder)
        #expect(after["BTC"]?.historyEntries == 0)
        #expect(after["ETH"]?.tag == 4 && (after["ETH"]?.historyEntries ?? 0) > 100)
    }
}

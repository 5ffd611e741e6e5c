import AlertEngine
import AlertModel
import Foundation
import GRDB
import Testing

@testable import AlertStore

@Suite struct EngineStateStoreTests {
    static let btc = SymbolSnapshot(
        symbol: "BTC", firstTime: 1, lastTime: 120_000, lastPrice: 101.5, minutes: [0, 1, 2], prices: [100, 101, 101.5],
        pairs: [PairSnapshot(rule: "btc-100", fingerprint: 77, armed: false, spent: false, lastFired: 60_000)])

    @Test func snapshotsSurviveAReopen() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        var eth = Self.btc
        eth.symbol = "ETH"
        try store.engineState.save([Self.btc, eth], now: 5)
        var newer = Self.btc
        newer.lastPrice = 99
        try store.engineState.save([newer], now: 6)
        store.close()

        let reopened = try StateStore.open(folder)
        defer { reopened.close() }
        #expect(try reopened.engineState.load() == [newer, eth])
        #expect(try reopened.engineState.count() == 2)
    }

    @Test func marketListIsReplacedWhole() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        #expect(try store.engineState.loadMarkets() == nil)
        let first = MarketsSave(
            markets: [
                Market(symbol: "BTC-PERP", name: "BTC-PERP", base: "BTC", quote: "USDT", future: true, active: true),
                Market(symbol: "ETH", base: "ETH", quote: "USD", future: false, active: false)
            ],
            source: "btse", fetchedAt: 10)
        try store.engineState.save([], markets: first, now: 10)
        #expect(try store.engineState.loadMarkets() == first)
        let second = MarketsSave(markets: [first.markets[1]], source: "markets.json", fetchedAt: 20)
        try store.engineState.save([Self.btc], markets: second, now: 20)
        #expect(try store.engineState.loadMarkets() == second)
    }

    @Test func damagedRowIsAnErrorNamingTheSymbol() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        try store.engineState.save([Self.btc], now: 1)
        store.close()
        try DatabaseQueue(path: folder.databasePath).write { db in
            try db.execute(sql: "UPDATE symbol_state SET snapshot = x'0102' WHERE symbol = 'BTC'")
        }
        let reopened = try StateStore.open(folder)
        defer { reopened.close() }
        #expect(throws: StateReadError.self) { try reopened.engineState.load() }
        do {
            _ = try reopened.engineState.load()
        } catch {
            #expect("\(error)".hasPrefix("saved state of BTC cannot be read"))
        }
    }

    /// A state folder of schema version 1 (outbox only) gains the state tables and
    /// keeps its pending alerts.
    @Test func versionOneFolderIsMigrated() throws {
        let folder = temporaryFolder()
        try folder.create()
        let queue = try DatabaseQueue(path: folder.databasePath)
        try StateStore.migrator.migrate(queue, upTo: "v1-outbox")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO outbox (alert_id, rule, symbol, sink, time, price, condition, threshold_low,
                      threshold_high, value, message, notify, payload, created_at, attempts, next_attempt_at)
                    VALUES ('r:BTC:1', 'r', 'BTC', 'hook', 1, 99, 'price above 90', 90, NULL, 99, 'm', 'hook', '{}', 1, 0, 1)
                    """)
        }
        try queue.close()
        let reopened = try StateStore.open(folder)
        defer { reopened.close() }
        #expect(try reopened.outbox.depth() == 1)
        try reopened.engineState.save([Self.btc], now: 2)
        #expect(try reopened.engineState.load() == [Self.btc])
        let version = try DatabaseQueue(path: folder.databasePath).read { db in
            try Int.fetchOne(db, sql: "PRAGMA user_version")
        }
        #expect(version == StateStore.schemaVersion)
    }

    /// `minutes` of BTC at 100 + minute.
    static func history(_ minutes: ClosedRange<Int64>) -> SymbolSnapshot {
        SymbolSnapshot(
            symbol: "BTC", firstTime: 0, lastTime: minutes.upperBound * 60_000,
            lastPrice: 100 + Double(minutes.upperBound), minutes: Array(minutes),
            prices: minutes.map { 100 + Double($0) })
    }

    /// The minute history is kept by the hour: a save rewrites the hours from the newest one on
    /// disk and the oldest when it was trimmed, not the whole day, and what it reads back is the
    /// history exactly as saved.
    @Test func aSaveRewritesOnlyTheHoursThatChanged() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        defer { store.close() }
        try store.engineState.save([Self.history(0...1439)], now: 1)
        let other = try DatabaseQueue(path: folder.databasePath)
        try other.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE written (hour INTEGER);
                    CREATE TRIGGER counted AFTER INSERT ON symbol_history BEGIN INSERT INTO written VALUES (NEW.hour); END;
                    CREATE TRIGGER updated AFTER UPDATE ON symbol_history BEGIN INSERT INTO written VALUES (NEW.hour); END;
                    """)
        }
        func written() throws -> [Int64] {
            try other.write { db in
                defer { try? db.execute(sql: "DELETE FROM written") }
                return try Int64.fetchAll(db, sql: "SELECT hour FROM written ORDER BY hour")
            }
        }
        #expect(try store.engineState.load() == [Self.history(0...1439)])

        // One more minute, the oldest trimmed: the newest hour on disk, the new one, the first.
        try store.engineState.save([Self.history(1...1440)], now: 2)
        #expect(try written() == [0, 23, 24])
        // One more in the same hour: that hour alone.
        try store.engineState.save([Self.history(1...1441)], now: 3)
        #expect(try written() == [24])
        // A whole hour trimmed: its row goes.
        try store.engineState.save([Self.history(61...1442)], now: 4)
        #expect(try written() == [1, 24])
        #expect(
            try other.read { db in try Int64.fetchAll(db, sql: "SELECT hour FROM symbol_history ORDER BY hour") }
                == Array(1...24))
        #expect(try store.engineState.load() == [Self.history(61...1442)])

        // A history that ends hours before the disk's (histories only grow at the end; the store
        // still checks, knowing the disk's extent from its last save): the later hours go.
        try store.engineState.save([Self.history(61...179)], now: 5)
        #expect(
            try other.read { db in try Int64.fetchAll(db, sql: "SELECT hour FROM symbol_history ORDER BY hour") }
                == [1, 2])
        #expect(try store.engineState.load() == [Self.history(61...179)])

        // No history any more (no rule needs one): every hour goes.
        var bare = Self.history(61...1442)
        (bare.minutes, bare.prices) = ([], [])
        try store.engineState.save([bare], now: 5)
        #expect(try other.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM symbol_history") } == 0)
        #expect(try store.engineState.load() == [bare])
    }

    /// A state folder of schema 3 holds the history inside each snapshot: it is read as it is,
    /// and the next save moves it into hourly rows.
    @Test func aHistoryInsideTheSnapshotIsReadAndMovedOut() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        defer { store.close() }
        let old = Self.history(0...130)
        try DatabaseQueue(path: folder.databasePath).write { db in
            try db.execute(
                sql: "INSERT INTO symbol_state (symbol, snapshot, saved_at) VALUES ('BTC', ?, 1)",
                arguments: [Data(old.encoded())])
        }
        #expect(try store.engineState.load() == [old])
        try store.engineState.save([Self.history(0...131)], now: 2)
        let (hours, blob) = try DatabaseQueue(path: folder.databasePath).read { db in
            (
                try Int64.fetchAll(db, sql: "SELECT hour FROM symbol_history ORDER BY hour"),
                try Data.fetchOne(db, sql: "SELECT snapshot FROM symbol_state")
            )
        }
        #expect(hours == [0, 1, 2])
        #expect(try SymbolSnapshot(decoding: [UInt8](try #require(blob))).minutes.isEmpty)
        #expect(try store.engineState.load() == [Self.history(0...131)])
    }

    /// A state folder of schema 4 holds the history keyed by symbol first: the migration to
    /// schema 5 moves every row to the table keyed by hour first, and they read back the same.
    @Test func aSchemaFourHistoryIsMovedToTheHourKeyedTable() throws {
        let folder = temporaryFolder()
        let eth = SymbolSnapshot(
            symbol: "ETH", firstTime: 0, lastTime: 200 * 60_000, lastPrice: 7,
            minutes: Array(50...200), prices: (50...200).map { Double($0) / 4 })
        do {
            let store = try StateStore.open(folder)
            try store.engineState.save([Self.history(0...1439), eth], now: 1)
            store.close()
        }
        try DatabaseQueue(path: folder.databasePath).write { db in
            try db.execute(
                sql: """
                    CREATE TABLE old_history (
                      symbol TEXT NOT NULL, hour INTEGER NOT NULL, entries BLOB NOT NULL, PRIMARY KEY (symbol, hour)
                    ) WITHOUT ROWID;
                    INSERT INTO old_history SELECT symbol, hour, entries FROM symbol_history;
                    DROP TABLE symbol_history;
                    ALTER TABLE old_history RENAME TO symbol_history;
                    DELETE FROM grdb_migrations WHERE identifier = 'v5-history-by-hour';
                    PRAGMA user_version = 4;
                    """)
        }
        let store = try StateStore.open(folder)
        defer { store.close() }
        #expect(try store.engineState.load() == [Self.history(0...1439), eth])
        let (columns, rows) = try DatabaseQueue(path: folder.databasePath).read { db in
            (
                try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info('symbol_history_symbol')"),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM symbol_history")
            )
        }
        #expect(columns == ["symbol", "hour"])
        #expect(rows == 24 + 4)
        // A partial read finds its hours through the new keys too.
        let partial = try store.engineState.load(lookingUp: ["ETH": [190...190]])
        #expect(partial.map(\.minutes) == [Array(120...200)]) // hours 3 and the one before it
    }

    @Test func aDamagedHistoryIsAnErrorNamingTheSymbol() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        defer { store.close() }
        try store.engineState.save([Self.history(0...130)], now: 1)
        try DatabaseQueue(path: folder.databasePath).write { db in
            try db.execute(sql: "UPDATE symbol_history SET entries = x'07' WHERE hour = 1")
        }
        do {
            _ = try store.engineState.load()
            Issue.record("a damaged history was read")
        } catch {
            #expect("\(error)" == "saved state of BTC cannot be read: unknown minute history format 7")
        }
    }
}

@Suite struct RuleCacheUnitTests {
    static let rules = [
        Rule(
            id: "a", scope: .symbols(["BTC", "ETH"]), condition: .price(.inside(1, 2)), notify: ["ops", "stdout"],
            repeatMode: .once, cooldown: 60_000, hysteresis: 0, message: "{{symbol}} é", enabled: false),
        Rule(
            id: "b", scope: .match(MarketFilter(future: false, quote: "USD", base: nil, active: true)),
            condition: .change(window: 3_600_000, .below(-2.5)), notify: ["ops", "stdout"], hysteresis: 0.5),
        Rule(id: "c", scope: .symbols(["BTC", "ETH"]), condition: .price(.crossesBelow(-0.0)))
    ]

    func cache() throws -> RuleCache {
        let folder = StateFolder(
            path: FileManager.default.temporaryDirectory.appendingPathComponent("rc-\(UUID().uuidString)").path)
        try folder.create()
        return RuleCache(folder: folder)
    }

    @Test func rulesRoundTripAndShareTheirLists() throws {
        let decoded = try Rule.decode(Rule.encode(Self.rules))
        #expect(decoded == Self.rules)
        // Equal lists are written once and shared after decoding: one buffer, not one per rule.
        func storage(_ list: [String]) -> UnsafeRawPointer? {
            list.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }
        #expect(storage(decoded[0].notify) == storage(decoded[1].notify))
        guard case .symbols(let first) = decoded[0].scope, case .symbols(let third) = decoded[2].scope else {
            Issue.record("scopes changed"); return
        }
        #expect(storage(first) == storage(third))
    }

    /// A list index is a number, not a count of bytes to come: late rules may name late lists.
    @Test func manyListsRoundTrip() throws {
        let rules = (0..<300).map {
            Rule(id: "r\($0)", scope: .symbols(["S\($0)"]), condition: .price(.above(Double($0))))
        }
        #expect(try Rule.decode(Rule.encode(rules)) == rules)
    }

    @Test func damagedEncodingsAreRefused() {
        let encoded = Rule.encode(Self.rules)
        for cut in [1, 5, encoded.count / 2, encoded.count - 1] {
            #expect(throws: SnapshotError.self) { try Rule.decode(Array(encoded.prefix(cut))) }
        }
        #expect(throws: SnapshotError.self) { try Rule.decode(encoded + [0]) }
        #expect(throws: SnapshotError.self) { try Rule.decode([9] + encoded.dropFirst()) }
    }

    @Test func aCacheAnswersOnlyItsOwnKey() throws {
        let cache = try cache()
        let executable = FileManager.default.temporaryDirectory.appendingPathComponent("exe-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: executable, contents: Data("v1".utf8)))
        defer { try? FileManager.default.removeItem(atPath: executable) }
        let files: [[UInt8]] = [Array("one".utf8), Array("two".utf8)]
        let key = try #require(RuleCache.key(files: files, executable: executable))
        #expect(cache.entry(for: key)?.rules == nil)
        #expect(cache.store(Self.rules, for: key))
        #expect(cache.entry(for: key)?.rules == Self.rules)
        #expect(cache.store(Self.rules, rulesEnds: [812, nil, 0], for: key))
        #expect(cache.entry(for: key) == RuleCache.Entry(rules: Self.rules, rulesEnds: [812, nil, 0]))
        // Other bytes, other file boundaries, another binary: misses.
        #expect(RuleCache.key(files: [Array("onf".utf8), Array("two".utf8)], executable: executable) != key)
        #expect(RuleCache.key(files: [Array("onet".utf8), Array("wo".utf8)], executable: executable) != key)
        #expect(FileManager.default.createFile(atPath: executable, contents: Data("v2 longer".utf8)))
        let rebuilt = try #require(RuleCache.key(files: files, executable: executable))
        #expect(rebuilt != key)
        #expect(cache.entry(for: rebuilt)?.rules == nil)
        #expect(RuleCache.key(files: files, executable: "/nonexistent") == nil)
    }

    @Test func aCacheThatCannotBeWrittenIsLeftAlone() throws {
        let cache = RuleCache(folder: StateFolder(path: "/nonexistent/folder"))
        #expect(!cache.store(Self.rules, for: [1, 2, 3]))
        #expect(cache.entry(for: [1, 2, 3])?.rules == nil)
    }
}

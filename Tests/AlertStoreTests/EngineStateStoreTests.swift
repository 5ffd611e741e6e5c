import AlertCore
import AlertStore
import Foundation
import GRDB
import Testing

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
        let first = MarketsSave(markets: [Market(symbol: "BTC-PERP", name: "BTC-PERP", base: "BTC", quote: "USDT", future: true, active: true),
                                          Market(symbol: "ETH", base: "ETH", quote: "USD", future: false, active: false)],
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

    /// A state folder written by the previous version (outbox only) gains the state tables and
    /// keeps its pending alerts.
    @Test func versionOneFolderIsMigrated() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        try store.outbox.enqueue(alert(), sinks: ["hook"], now: 1)
        store.close()
        try DatabaseQueue(path: folder.databasePath).write { db in
            try db.execute(sql: """
                DROP TABLE symbol_state; DROP TABLE market_list; DROP TABLE market_list_meta;
                DELETE FROM grdb_migrations WHERE identifier = 'v2-state'; PRAGMA user_version = 1;
                """)
        }
        let reopened = try StateStore.open(folder)
        defer { reopened.close() }
        #expect(try reopened.outbox.depth() == 1)
        try reopened.engineState.save([Self.btc], now: 2)
        #expect(try reopened.engineState.load() == [Self.btc])
        let version = try DatabaseQueue(path: folder.databasePath).read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }
        #expect(version == 2)
    }
}

import AlertEngine
import AlertModel
import AlertOutbox
import AlertStore
import AlertTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import AlertPostgres

/// The engine state, the policy journal and the known markets in PostgreSQL, against a real
/// server, compared with what a state folder keeps; and the store's queue across a dropped
/// connection.
@Suite struct PostgresStateTests {
    /// `hours` hours of minute history ending at minute `end`, one price a minute.
    static func snapshot(_ symbol: String, hours: Int, end: Int64, price: Double = 100) -> SymbolSnapshot {
        let minutes = Array((end - Int64(hours * 60) + 1)...end)
        return SymbolSnapshot(
            symbol: symbol, firstTime: minutes[0] * 60_000, lastTime: end * 60_000, lastPrice: price,
            minutes: minutes, prices: minutes.map { price + Double($0 % 7) },
            pairs: [
                PairSnapshot(
                    rule: "\(symbol.lowercased())-up", fingerprint: 7, armed: true, spent: false, lastFired: nil)
            ])
    }

    /// `body` with a store on a new PostgreSQL server and a state folder beside it, to compare
    /// what each keeps; the folder is removed afterwards.
    static func withFolderAndStore(
        _ body: @Sendable (PostgresServer, StateStore, PostgresStore) async throws -> Void
    ) async throws {
        try await PostgresServer.with { server in
            let folder = StateFolder(path: NSTemporaryDirectory() + "pricealert-pg-\(UUID().uuidString)/state")
            defer { try? FileManager.default.removeItem(atPath: folder.path) }
            let sqlite = try StateStore.open(folder)
            defer { sqlite.close() }
            try await body(server, sqlite, try await Self.open(server))
        }
    }

    static func open(
        _ server: PostgresServer, use: PostgresStore.Use = .init(), logger: Logger? = nil
    ) async throws
        -> PostgresStore
    {
        try await PostgresStore.open(
            PostgresURL(server.url()), use: use, logger: logger ?? Logger(label: "pricealert.postgres"))
    }

    @Test func engineStateRoundTripsAsInAStateFolder() async throws {
        try await Self.withFolderAndStore { server, sqlite, store in
            let btc = Self.snapshot("BTC", hours: 5, end: 30_000)
            let eth = Self.snapshot("ETH", hours: 2, end: 30_000, price: 10)
            let bare = SymbolSnapshot(symbol: "DOGE", lastTime: 5, lastPrice: 0.1)
            let markets = MarketsSave(
                markets: [
                    Market(symbol: "BTC", name: "Bitcoin", base: "BTC", quote: "USD", future: false, active: true),
                    Market(
                        symbol: "ETH-PERP", name: "ETH-PERP", base: "ETH", quote: "USDT", future: true, active: false)
                ], source: "binance", fetchedAt: 42)
            for keeper in [sqlite.engine, store.engine] {
                try await keeper.save([btc, eth, bare], markets: markets, now: 1)
            }
            // The history moves on: two minutes more, the oldest hour's first minutes trimmed.
            var newer = btc
            newer.minutes = Array(newer.minutes.dropFirst(90)) + [30_001, 30_002]
            newer.prices = Array(newer.prices.dropFirst(90)) + [150, 151]
            var shorter = eth
            shorter.minutes = []
            shorter.prices = []
            for keeper in [sqlite.engine, store.engine] {
                try await keeper.save([newer, shorter], markets: nil, now: 2)
            }
            await store.close()

            let reopened = try await Self.open(server)
            let expected = try sqlite.engineState.load()
            #expect(expected.map(\.symbol) == ["BTC", "DOGE", "ETH"])
            #expect(try await reopened.engine.load() == expected)
            #expect(try await reopened.engine.loadMarkets() == markets)
            #expect(try await reopened.engine.count() == 3)
            // `check` reads only the symbols it evaluates, each whole.
            let some = try await reopened.engine.load(lookingUp: ["BTC": [29_990...30_002], "XRP": [1...2]])
            #expect(some == [newer])
            // Only the hours the history spans are kept: BTC's 30 001 minutes reach into hour 500.
            let hours = try await server.query(
                "SELECT hour FROM engine_history WHERE symbol = 'BTC' ORDER BY hour")
            let spanned = Set(newer.minutes.map(SymbolSnapshot.hour(ofMinute:))).sorted()
            #expect(hours == spanned.map { "\($0)\n" }.joined())
            #expect(try await server.query("SELECT COUNT(*) FROM engine_history WHERE symbol = 'ETH'") == "0\n")
            await reopened.close()
        }
    }

    @Test(
        "a save is three statements however many symbols it holds, and stores what a state folder does: the last of a symbol named twice, the hours each history spans"
    )
    func aSaveOfManySymbolsIsThreeStatements() async throws {
        try await Self.withFolderAndStore { server, sqlite, store in
            // 120 symbols with 2 to 4 hours of history and 80 without; the first later trimmed.
            var snapshots = (0..<120).map { Self.snapshot("S\($0)", hours: 2 + $0 % 3, end: 30_000 + Int64($0)) }
            snapshots += (0..<80).map { SymbolSnapshot(symbol: "B\($0)", lastTime: Int64($0), lastPrice: 1) }
            for keeper in [sqlite.engine, store.engine] { try await keeper.save(snapshots, markets: nil, now: 1) }
            // Each statement on the two tables counted by a statement-level trigger.
            try await server.psql(
                [
                    "CREATE TABLE statements (tab TEXT, op TEXT)",
                    """
                    CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN INSERT INTO statements VALUES (TG_TABLE_NAME, TG_OP); RETURN NULL; END $$
                    """,
                    "CREATE TRIGGER counted AFTER INSERT OR DELETE ON engine_symbols FOR EACH STATEMENT EXECUTE FUNCTION count_statement()",
                    "CREATE TRIGGER counted AFTER INSERT OR DELETE ON engine_history FOR EACH STATEMENT EXECUTE FUNCTION count_statement()",
                    "GRANT INSERT ON statements TO pricealert"
                ], database: "pricealert")
            var trimmed = snapshots[0]
            trimmed.minutes = Array(trimmed.minutes.dropFirst(70)) + [30_001]
            trimmed.prices = Array(trimmed.prices.dropFirst(70)) + [7]
            var again = snapshots
            again[0].lastPrice = 3
            again.append(trimmed)
            again[120].minutes = [29_000]
            again[120].prices = [2]
            for keeper in [sqlite.engine, store.engine] { try await keeper.save(again, markets: nil, now: 2) }
            #expect(
                try await server.query("SELECT tab, op, COUNT(*) FROM statements GROUP BY tab, op ORDER BY tab, op")
                    == "engine_history|DELETE|1\nengine_history|INSERT|1\nengine_symbols|INSERT|1\n")
            await store.close()

            let reopened = try await Self.open(server)
            let expected = try sqlite.engineState.load()
            #expect(expected.count == 200)
            #expect(try await reopened.engine.load() == expected)
            #expect(expected.first { $0.symbol == "S0" } == trimmed, "a symbol named twice is saved as the last")
            let hours = try await server.query("SELECT hour FROM engine_history WHERE symbol = 'S0' ORDER BY hour")
            #expect(
                hours == Set(trimmed.minutes.map(SymbolSnapshot.hour(ofMinute:))).sorted().map { "\($0)\n" }.joined())
            await reopened.close()
        }
    }

    @Test func aDamagedSnapshotIsAnErrorNamingTheSymbol() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            try await store.engine.save([Self.snapshot("BTC", hours: 1, end: 100)], markets: nil, now: 1)
            try await server.psql(
                "UPDATE engine_symbols SET snapshot = '\\x0102' WHERE symbol = 'BTC'", database: "pricealert")
            await #expect {
                _ = try await store.engine.load()
            } throws: { error in
                (error as? StateReadError)?.symbol == "BTC"
            }
            await store.close()
        }
    }

    /// Outbox before state, in one commit: a save made while an alert's outbox write is failing
    /// fails too, and the save that follows commits the alert's row with the state.
    @Test func aStateSaveCommitsOnlyWithTheOutboxWritesThatFailedBefore() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            try await server.psql(
                """
                CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$
                """,
                "CREATE TRIGGER refuse BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION refuse()",
                database: "pricealert")
            let results = Mutex<[String]>([])
            let alert = PostgresStoreTests.alert("btc-up")
            store.outbox.enqueue(.event(alert), sinks: ["hook"], urgent: false, now: 1) { result in
                results.withLock { $0.append((try? result.get()).map { "written \($0.count)" } ?? "failed") }
            }
            await store.outbox.commit()
            #expect(results.withLock { $0 } == ["failed"])
            let state = Self.snapshot("BTC", hours: 1, end: 100)
            await #expect(throws: (any Error).self) {
                try await store.engine.save([state], markets: nil, now: 2)
            }
            #expect(try await server.query("SELECT COUNT(*) FROM engine_symbols") == "0\n")

            try await server.psql("DROP TRIGGER refuse ON outbox", database: "pricealert")
            try await store.engine.save([state], markets: nil, now: 3)
            #expect(results.withLock { $0 } == ["failed", "written 1"])
            #expect(
                try await server.query("SELECT (SELECT COUNT(*) FROM outbox), (SELECT COUNT(*) FROM engine_symbols)")
                    == "1|1\n")
            #expect(try await store.outbox.pending().map(\.delivery) == [.event(alert)])
            await store.close()
        }
    }

    @Test func thePolicyJournalKeepsHeldEventsInOrder() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            var sourced = PostgresStoreTests.alert("eth-up", time: 3)
            sourced.source = "kraken"
            let rows = [
                PolicyStateStore.Pending(
                    seq: 1, sink: "hook", alert: PostgresStoreTests.alert("a", time: 1), quiet: true),
                PolicyStateStore.Pending(
                    seq: 2, sink: "mail", alert: PostgresStoreTests.alert("b", time: 2), quiet: false),
                PolicyStateStore.Pending(seq: 3, sink: "hook", alert: sourced, quiet: true)
            ]
            let journal: any PolicyJournal = store.journal
            journal.record(added: rows, removed: [])
            journal.record(added: [], removed: [(sink: "mail", eventID: rows[1].alert.id)])
            await store.outbox.commit()
            #expect(journal.unwritten == nil)
            await store.close()
            let reopened = try await Self.open(server)
            let loaded = try await reopened.journal.load()
            // The store numbers the rows itself, in the order they were written.
            #expect(loaded.map(\.seq) == loaded.map(\.seq).sorted())
            #expect(loaded.map { [$0.sink, $0.alert.id] } == [rows[0], rows[2]].map { [$0.sink, $0.alert.id] })
            #expect(loaded.map(\.alert) == [rows[0].alert, sourced])
            #expect(loaded.map(\.quiet) == [true, true])
            await reopened.close()
        }
    }

    /// Two instances on one store each number their journal rows from 0: every row survives,
    /// in one order, each known by its (sink, event). A second write of a held event keeps the
    /// first in its place.
    @Test func twoInstancesJournalsKeepEachOthersHeldEvents() async throws {
        try await PostgresServer.with { server in
            let (a, b) = (try await Self.open(server), try await Self.open(server))
            @Sendable func row(_ seq: Int64, _ rule: String, time: Int64) -> PolicyStateStore.Pending {
                PolicyStateStore.Pending(
                    seq: seq, sink: "hook", alert: PostgresStoreTests.alert(rule, time: time), quiet: false)
            }
            a.journal.record(added: [row(0, "a-first", time: 1), row(1, "a-second", time: 2)], removed: [])
            await a.outbox.commit()
            b.journal.record(added: [row(0, "b-first", time: 3), row(1, "b-second", time: 4)], removed: [])
            await b.outbox.commit()
            // The same event again, from the other instance (a leader after a takeover).
            a.journal.record(added: [row(7, "b-first", time: 3)], removed: [])
            await a.outbox.commit()
            #expect(a.journal.unwritten == nil && b.journal.unwritten == nil)
            for store in [a, b] {
                let loaded = try await store.journal.load()
                #expect(loaded.map(\.alert.rule) == ["a-first", "a-second", "b-first", "b-second"])
                #expect(Set(loaded.map(\.seq)).count == 4)
            }
            b.journal.record(added: [], removed: [(sink: "hook", eventID: row(0, "a-first", time: 1).alert.id)])
            await b.outbox.commit()
            #expect(try await a.journal.load().map(\.alert.rule) == ["a-second", "b-first", "b-second"])
            await a.close()
            await b.close()
        }
    }

    /// `store copy` writes a state folder's held events in the folder's order, numbered by the
    /// store, after what the store holds; a second copy adds none of them again.
    @Test func copiedHeldEventsKeepTheFoldersOrder() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            store.journal.record(
                added: [
                    PolicyStateStore.Pending(
                        seq: 0, sink: "hook", alert: PostgresStoreTests.alert("running", time: 9), quiet: true)
                ], removed: [])
            await store.outbox.commit()
            var folder = PostgresStore.Folder(pending: [], dead: [], silences: [], backfill: [])
            folder.held = [(Int64(40), "first", Int64(3)), (41, "second", 1)].map { seq, rule, time in
                PolicyStateStore.Pending(
                    seq: seq, sink: "hook", alert: PostgresStoreTests.alert(rule, time: time), quiet: false)
            }
            #expect(try await store.copy(folder).held == (2, 0))
            #expect(try await store.copy(folder).held == (0, 2))
            let loaded = try await store.journal.load()
            #expect(loaded.map(\.alert.rule) == ["running", "first", "second"])
            #expect(loaded.map(\.quiet) == [true, false, false])
            await store.close()
        }
    }

    /// A store of schema 4 with held events moves to schema 5 keeping them, in their order, and
    /// numbers later rows after them.
    @Test func schemaFiveKeepsTheHeldEventsOfSchemaFour() async throws {
        try await PostgresServer.with { server in
            // Schema 4 as pricealert made it (the role owns the tables), with two rows held.
            let older = PostgresMigrations.all.prefix(4)
            var statements = [
                "SET ROLE pricealert",
                "CREATE TABLE pricealert_schema (version BIGINT PRIMARY KEY, description TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            ]
            statements += older.flatMap(\.sql)
            statements += older.indices.map {
                "INSERT INTO pricealert_schema (version, description) VALUES (\($0 + 1), 'step \($0 + 1)')"
            }
            for (seq, rule) in [(Int64(5), "older"), (9, "newer")] {
                let alert = PostgresStoreTests.alert(rule, time: seq)
                statements.append(
                    """
                    INSERT INTO policy_pending (seq, sink, alert_id, rule, symbol, time, price, condition, threshold_low,
                      threshold_high, threshold_null, value, message, notify, kind, reminder, quiet, source)
                    VALUES (\(seq), 'hook', '\(alert.id)', '\(alert.rule)', '\(alert.symbol)', \(alert.time), \(alert.price),
                      '\(alert.condition)', 100, NULL, FALSE, \(alert.value), '\(alert.message)', 'hook', '\(alert.kind.rawValue)',
                      NULL, TRUE, NULL)
                    """)
            }
            try await server.psql(statements, database: "pricealert")
            let store = try await Self.open(server)
            // Step 5 and every later one are applied.
            #expect(try await store.status().schemaVersion == PostgresMigrations.all.count)
            store.journal.record(
                added: [
                    PolicyStateStore.Pending(
                        seq: 0, sink: "hook", alert: PostgresStoreTests.alert("later", time: 1), quiet: false)
                ], removed: [])
            await store.outbox.commit()
            let loaded = try await store.journal.load()
            #expect(loaded.map(\.alert.rule) == ["older", "newer", "later"])
            #expect(loaded.map(\.seq).prefix(2) == [5, 9] && loaded[2].seq > 9)
            await store.close()
        }
    }

    /// The list of ticks without a source and each rule-file source's are kept, with their
    /// pending markets, as a state folder keeps them; a source's list is loaded when asked for;
    /// and each rule-file source's last market list.
    @Test func knownMarketsAreKeptWithTheirPendingOnes() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            #expect(try await store.listings.load(sources: ["bx"]).isEmpty)
            var listings = NewListings(rules: [])
            listings.restore(known: [], pending: [])
            try await store.listings.save([listings])
            #expect(try await store.listings.load(sources: []) == [SavedListings(source: nil, known: [], pending: [])])
            listings.restore(known: ["BTC", "NEW"], pending: ["NEW"])
            var sourced = NewListings(rules: [], source: "bx")
            sourced.restore(known: ["ETH", "SOL"], pending: ["SOL"])
            try await store.listings.save([listings, sourced])
            let plain = SavedListings(source: nil, known: ["BTC", "NEW"], pending: ["NEW"])
            #expect(try await store.listings.load(sources: []) == [plain])
            let loaded = try await store.listings.load(sources: ["bx", "other"])
            #expect(loaded == [plain, SavedListings(source: "bx", known: ["ETH", "SOL"], pending: ["SOL"])])

            #expect(try await store.sourceMarkets.load("bx") == nil)
            let markets = [
                Market(symbol: "ETHBTC", name: "Ether", base: "ETH", quote: "BTC", future: false, active: true),
                Market(symbol: "SOLBTC", name: "", base: "SOL", quote: "BTC", future: false, active: false)
            ]
            try await store.sourceMarkets.save(MarketsSave(markets: markets, source: "bx", fetchedAt: 7))
            try await store.sourceMarkets.save(MarketsSave(markets: [], source: "by", fetchedAt: 8))
            #expect(
                try await store.sourceMarkets.load("bx") == MarketsSave(markets: markets, source: "bx", fetchedAt: 7))
            #expect(try await store.sourceMarkets.load("by") == MarketsSave(markets: [], source: "by", fetchedAt: 8))
            await store.close()
        }
    }

    /// Two processes holding one store at once are refused, naming the holder and its
    /// `application_name`; the lock goes with the session.
    @Test func anExclusiveStoreIsHeldByOneProcess() async throws {
        try await PostgresServer.with { server in
            let first = try await Self.open(server, use: .init(exclusive: true, application: "pricealert check"))
            await #expect {
                _ = try await Self.open(server, use: .init(exclusive: true))
            } throws: { error in
                // The holder's session is named, so a check that finds another check holding
                // the store can leave the interval to it.
                guard let error = error as? PostgresStoreError else { return false }
                return error.heldBy?.contains("backend pid") == true
                    && error.holderApplication == "pricealert check"
                    && "\(error)".contains("in use by another pricealert")
                    && !"\(error)".contains(server.password)
            }
            // Not exclusive (outbox list, silence add): allowed beside it.
            let reader = try await Self.open(server)
            await reader.close()
            await first.close()
            let second = try await Self.open(server, use: .init(exclusive: true))
            await second.close()
        }
    }

    /// A daemon's store: writes handed over while the connection is down wait, in order, and
    /// are made once the server is back; the outage is logged once, without the password; the
    /// lock is held again.
    @Test func writesWaitForTheDatabaseAndResume() async throws {
        try await PostgresServer.with { server in
            let capture = CapturingLogHandler()
            let store = try await Self.open(
                server, use: .init(reconnects: true, exclusive: true), logger: capture.logger(label: "pg"))
            let written = Mutex<[String]>([])
            @Sendable func enqueue(_ index: Int) {
                let alert = PostgresStoreTests.alert("r\(index)", time: Int64(index))
                store.outbox.enqueue(.event(alert), sinks: ["hook"], urgent: false, now: Int64(index)) { result in
                    if case .success = result { written.withLock { $0.append(alert.rule) } }
                }
            }
            for index in 0..<5 { enqueue(index) }
            await store.outbox.commit()
            try await server.restart {
                // While it is down: more alerts and a save are handed over, and wait.
                for index in 5..<10 { enqueue(index) }
            }
            try await store.engine.save([Self.snapshot("BTC", hours: 1, end: 100)], markets: nil, now: 1)
            #expect(written.withLock { $0 } == (0..<10).map { "r\($0)" })
            #expect(try await store.outbox.pending().map(\.delivery.events[0].rule) == (0..<10).map { "r\($0)" })
            #expect(try await store.engine.count() == 1)
            #expect(await store.lost() == nil)
            // The lock is held again: another process is refused.
            await #expect(throws: PostgresStoreError.self) {
                _ = try await Self.open(server, use: .init(exclusive: true))
            }
            await store.close()
            let messages = capture.records.map(\.message)
            #expect(messages.filter { $0.contains("waiting for the database") }.count == 1)
            #expect(messages.filter { $0.contains("connected again") }.count == 1)
            #expect(!messages.contains { $0.contains(server.password) })
        }
    }

    /// A job that handed over what it made (an alert's rows to delivery) and then met its
    /// connection closing, before it returned, is not run again: run again, it would hand over
    /// twice (an alert delivered twice after a database restart under `run`).
    @Test func aJobThatHandedOverIsNotRunAgainWhenItsConnectionClosesAfter() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server, use: .init(reconnects: true, exclusive: true))
            let runs = Mutex(0)
            let handed = Mutex(0)
            let accepted = store.queue.submit { connection, attempt in
                let run = runs.withLock {
                    $0 += 1; return $0
                }
                guard case .success(let connection) = connection else { return .done }
                attempt.complete { handed.withLock { $0 += 1 } }
                // The connection closes (the server restarts) after the hand-over, before the
                // job returns: the queue's watch sees the close first.
                if run == 1 { try? await connection.close() }
                return .done
            }
            #expect(accepted)
            // Runs after the job, and after any run of it again.
            try await store.queue.perform { _ in }
            #expect(runs.withLock { $0 } == 1)
            #expect(handed.withLock { $0 } == 1)
            await store.close()
        }
    }

    /// A daemon stopping while the database is down waits `closingGrace` more, then fails what
    /// it could not write (reported as such) instead of waiting for ever.
    @Test func aStoreStoppingWhileTheDatabaseIsDownGivesUpAndSaysSo() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server, use: .init(reconnects: true, exclusive: true))
            let results = Mutex<[String]>([])
            try await server.restart {
                store.outbox.enqueue(.event(PostgresStoreTests.alert("late")), sinks: ["hook"], urgent: false, now: 1) {
                    result in
                    results.withLock { $0.append((try? result.get()).map { "written \($0.count)" } ?? "failed") }
                }
                store.stopping()
                await store.outbox.commit()
                #expect(results.withLock { $0 } == ["failed"])
            }
            await store.close()
            #expect(try await server.query("SELECT COUNT(*) FROM outbox") == "0\n")
        }
    }

    /// A command's store: a dropped connection fails what meets it, with the reason.
    @Test func aCommandsStoreFailsOnADroppedConnection() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            try await server.restart()
            await #expect(throws: (any Error).self) { _ = try await store.engine.count() }
            await store.close()
        }
    }
}

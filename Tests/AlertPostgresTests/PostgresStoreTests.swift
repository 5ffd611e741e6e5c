import AlertModel
import AlertOutbox
import AlertStore
import AlertTestSupport
import Logging
import Synchronization
import Testing

@testable import AlertPostgres

/// The PostgreSQL store against a real server (`PostgresServer`): each test starts its own.
@Suite struct PostgresStoreTests {
    static func alert(_ rule: String, time: Int64 = 1_000) -> Alert {
        Alert(
            rule: rule, symbol: "BTC-USD", time: time, price: 101.5, condition: "above", threshold: .value(100),
            value: 101.5, message: "\(rule) crossed", notify: ["hook", "mail"])
    }

    static func open(_ server: PostgresServer, logger: Logger? = nil) async throws -> PostgresStore {
        let url = try PostgresURL(server.url())
        return if let logger { try await PostgresStore.open(url, logger: logger) } else {
            try await PostgresStore.open(url)
        }
    }

    @Test func migratesOnceAndRefusesANewerSchema() async throws {
        try await PostgresServer.with { server in
            // Two stores opening at once apply each step once.
            async let first = Self.open(server)
            async let second = Self.open(server)
            let (a, b) = try await (first, second)
            #expect(try await a.status().schemaVersion == PostgresStore.schemaVersion)
            await a.close()
            await b.close()
            let versions = try await server.query("SELECT version FROM pricealert_schema ORDER BY version")
            #expect(versions == (1...PostgresStore.schemaVersion).map { "\($0)\n" }.joined())

            try await server.psql(
                "INSERT INTO pricealert_schema (version, description) VALUES (99, 'from the future')",
                database: "pricealert")
            await #expect {
                try await Self.open(server)
            } throws: { error in
                guard let error = error as? PostgresStoreError else { return false }
                return error.newerSchema == 99 && "\(error)".contains("newer than this pricealert knows")
                    && !"\(error)".contains(server.password)
            }
        }
    }

    @Test func aFailingStepLeavesNothingBehind() async throws {
        try await PostgresServer.with { server in
            let url = try PostgresURL(server.url())
            let store = try await PostgresStore.open(url)
            let broken =
                PostgresMigrations.all + [
                    PostgresMigrations.Step(
                        description: "half a step", sql: ["CREATE TABLE half (x INT)", "SELECT * FROM no_such_table"])
                ]
            await #expect(throws: (any Error).self) {
                try await store.queue.perform { connection in
                    try await PostgresMigrations.apply(on: connection, logger: store.queue.logger, steps: broken)
                }
            }
            await store.close()
            let left = try await server.query(
                "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'half'; SELECT MAX(version) FROM pricealert_schema")
            #expect(left == "0\n\(PostgresStore.schemaVersion)\n")
        }
    }

    @Test func outboxKeepsRowsUntilDeliveredAndMovesDeadLetters() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            let outbox = store.outbox
            let event = Self.alert("btc-high")
            let rows = try await outbox.enqueue(.event(event), sinks: ["hook", "mail"], now: 5)
            #expect(rows.map(\.sink) == ["hook", "mail"])
            #expect(try await outbox.enqueue(.event(event), sinks: ["hook"], now: 6).isEmpty)
            let pending = try await outbox.pending()
            #expect(pending.map(\.id) == rows.map(\.id))
            #expect(pending.map(\.delivery) == [.event(event), .event(event)])
            #expect(try await outbox.depth(sink: "hook") == 1)

            try await outbox.record([rows[0].id], .retry(at: 900, reason: "HTTP 503"))
            let retried = try await outbox.pending()[0]
            #expect(retried.attempts == 1 && retried.nextAttemptAt == 900 && retried.lastError == "HTTP 503")

            let moved = try await outbox.record(
                [rows[0].id], .dead(reason: "gave up", lastError: "HTTP 503", at: 1_000, fallback: "stdout"))
            #expect(moved.map(\.sink) == ["stdout"] && moved[0].delivery == .event(event))
            let dead = try await outbox.dead()
            #expect(dead.count == 1 && dead[0].deadReason == "gave up" && dead[0].attempts == 2)
            #expect(dead[0].delivery == .event(event))

            // The alert's fields stay while any row names it, and go with the last one.
            try await outbox.record([rows[1].id, moved[0].id], .delivered)
            #expect(try await server.query("SELECT refs FROM alerts") == "1\n")
            #expect(try await outbox.purge(dead: true, all: false) == 1)
            #expect(try await server.query("SELECT COUNT(*) FROM alerts") == "0\n")
            #expect(try await outbox.depth() == 0)
            await store.close()
        }
    }

    @Test func digestsAndTheirSinkSurviveTheRoundTrip() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            let events = [Self.alert("a", time: 1), Self.alert("b", time: 2)]
            let digest = Delivery.digest(Digest(sink: "mail", events: events, held: true))
            let rows = try await store.outbox.enqueue(digest, sinks: ["mail"], urgent: true, now: 1)
            let moved = try await store.outbox.record(
                rows.map(\.id), .dead(reason: "bounced", lastError: nil, at: 2, fallback: "stdout"))
            #expect(try await store.outbox.pending().map(\.delivery) == [digest])
            #expect(moved.first?.urgent == true)
            #expect(try await store.outbox.dead().map(\.delivery) == [digest])
            await store.close()
        }
    }

    @Test func deliveryOutboxWritesInOrderAndCommits() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            let outbox: any DeliveryOutbox = store.outbox
            let written = Mutex<[[OutboxEntry]]>([])
            for index in 0..<20 {
                outbox.enqueue(.event(Self.alert("r\(index)")), sinks: ["hook"], urgent: false, now: Int64(index)) {
                    result in
                    if case .success(let rows) = result { written.withLock { $0.append(rows) } }
                }
            }
            await outbox.commit()
            #expect(
                written.withLock { $0 }.flatMap { $0.map(\.delivery.id) } == (0..<20).map { Self.alert("r\($0)").id })
            #expect(try await outbox.countPending() == 20)
            #expect(try await outbox.loadPending().map(\.createdAt) == (0..<20).map(Int64.init))
            await store.close()
        }
    }

    @Test func claimsNeverHandOneRowToTwoAndLeasesRunOut() async throws {
        try await PostgresServer.with { server in
            let (a, b) = (try await Self.open(server), try await Self.open(server))
            for index in 0..<40 {
                try await a.outbox.enqueue(.event(Self.alert("r\(index)")), sinks: ["hook"], now: 0)
            }
            // Two instances claim one row at a time, at once, until nothing is left.
            func drain(_ store: PostgresStore, _ owner: String) async throws -> [Int64] {
                var ids: [Int64] = []
                while true {
                    let rows = try await store.outbox.claim(sink: "hook", owner: owner, now: 10, lease: 1_000, limit: 1)
                    if rows.isEmpty { return ids }
                    ids += rows.map(\.id)
                }
            }
            async let fromA = drain(a, "a")
            async let fromB = drain(b, "b")
            let (idsA, idsB) = try await (fromA, fromB)
            #expect(Set(idsA).isDisjoint(with: idsB))
            #expect((idsA + idsB).sorted() == (try await a.outbox.pending()).map(\.id))

            // Leased: nobody takes them until the lease has run out; then the same rows, same ids.
            let owner = b.outbox.owner
            #expect(try await b.outbox.claim(sink: "hook", owner: owner, now: 1_009, lease: 1_000, limit: 100).isEmpty)
            let again = try await b.outbox.claim(sink: "hook", owner: owner, now: 1_010, lease: 1_000, limit: 100)
            #expect(again.map(\.id) == (idsA + idsB).sorted())
            // An outcome ends the lease: a retried row is claimable when it is due.
            try await b.outbox.record([again[0].id], .retry(at: 1_020, reason: "HTTP 500"))
            #expect(try await a.outbox.claim(sink: "hook", owner: "a", now: 1_019, lease: 10, limit: 100).isEmpty)
            #expect(
                try await a.outbox.claim(sink: "hook", owner: "a", now: 1_020, lease: 10, limit: 100).map(\.id) == [
                    again[0].id
                ])
            await a.close()
            await b.close()
        }
    }

    /// A claim reads each row back whole in its one statement: a digest's events in their order
    /// with its sink, a range, no threshold, a reminder and a source, urgent rows first then
    /// oldest; and a row that names no stored alert fails the claim and leaves every row to
    /// the next claim.
    @Test func aClaimReadsEachRowWholeUrgentFirst() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            var ranged = Self.alert("range", time: 2)
            ranged.threshold = .range(90, 110)
            ranged.source = "binance"
            var bare = Self.alert("bare", time: 3)
            bare.threshold = .none
            var reminder = Self.alert("reminder", time: 4)
            reminder.kind = .reminder
            reminder.reminder = 3
            let digest = Delivery.digest(Digest(sink: "hook", events: [ranged, bare, reminder], held: true))
            let first = try await store.outbox.enqueue(.event(Self.alert("plain", time: 1)), sinks: ["hook"], now: 1)
            let second = try await store.outbox.enqueue(digest, sinks: ["hook"], now: 1)
            let urgent = try await store.outbox.enqueue(
                .event(Self.alert("urgent", time: 5)), sinks: ["hook"], urgent: true, now: 1)
            let claimed = try await store.outbox.claim(sink: "hook", owner: "a", now: 1, lease: 100, limit: 10)
            #expect(claimed.map(\.id) == (urgent + first + second).map(\.id))
            #expect(claimed.map(\.delivery) == (urgent + first + second).map(\.delivery))
            #expect(claimed.map(\.urgent) == [true, false, false])
            #expect(
                claimed
                    == (try await store.outbox.pending()).sorted {
                        ($0.urgent ? 0 : 1, $0.id) < ($1.urgent ? 0 : 1, $1.id)
                    })

            try await server.psql(
                "DELETE FROM alerts WHERE id = '\(Self.alert("plain", time: 1).id)'", database: "pricealert")
            await #expect(throws: PostgresOutbox.MissingAlerts.self) {
                try await store.outbox.claim(sink: "hook", owner: "b", now: 200, lease: 100, limit: 10)
            }
            let left = try await server.query("SELECT COUNT(*) FROM outbox WHERE locked_by IS NULL")
            #expect(left == "3\n")
            await store.close()
        }
    }

    /// Deliveries recorded together (one group commit) delete each row and count each alert
    /// they name once: an alert another row still names stays, with one reference fewer.
    @Test func deliveriesRecordedTogetherReleaseEachAlertOnce() async throws {
        try await PostgresServer.with { server in
            let store = try await Self.open(server)
            var rows: [OutboxEntry] = []
            for index in 0..<12 {
                rows += try await store.outbox.enqueue(
                    .event(Self.alert("r\(index)")), sinks: ["hook", "mail"], now: Int64(index))
            }
            let outbox: any DeliveryOutbox = store.outbox
            let recorded = Mutex(0)
            for row in rows where row.sink == "hook" || row.delivery.id.hasSuffix("0") {
                outbox.record([row.id], .delivered, committed: { _ in recorded.withLock { $0 += 1 } }, failed: { _ in })
            }
            await outbox.commit()
            let gone = rows.filter { $0.sink == "hook" || $0.delivery.id.hasSuffix("0") }
            #expect(recorded.withLock { $0 } == gone.count)
            let pending = try await store.outbox.pending()
            #expect(pending.map(\.id) == rows.filter { row in !gone.contains { $0.id == row.id } }.map(\.id))
            // Each alert still named by its "mail" row, with one reference; the others deleted.
            let refs = try await server.query("SELECT id || ' ' || refs FROM alerts ORDER BY id")
            #expect(refs == pending.map { "\($0.delivery.id) 1\n" }.sorted().joined())
            await store.close()
        }
    }

    @Test func silencesAndTheBackfillLedgerAreShared() async throws {
        try await PostgresServer.with { server in
            let (a, b) = (try await Self.open(server), try await Self.open(server))
            let added = try await a.silences.add(
                rule: "btc-*", symbol: "BTC-USD", from: 10, until: 100, comment: "maintenance", now: 5)
            #expect(try await b.silences.all() == [added])
            let expired = try await b.silences.expire(id: added.id, now: 50)
            #expect(expired?.until == 50 && expired?.expiredAt == 50)
            #expect(try await a.silences.expire(id: added.id, now: 60) == expired)
            #expect(try await a.silences.expire(id: "nosuchsilence", now: 60) == nil)

            try await a.backfill.record([
                BackfillLedger.Entry(source: "btse", symbol: "BTC-USD", reach: 100, fetchedAt: 5, candles: 60),
                BackfillLedger.Entry(source: "btse", symbol: "ETH-USD", reach: 200, fetchedAt: 5, candles: 60)
            ])
            try await b.backfill.record([
                BackfillLedger.Entry(source: "btse", symbol: "BTC-USD", reach: 50, fetchedAt: 6, candles: 120)
            ])
            #expect(try await a.backfill.reaches(source: "btse") == ["BTC-USD": 50, "ETH-USD": 200])
            #expect(try await a.backfill.reaches(source: "other").isEmpty)
            let status = try await a.status()
            #expect(status.counts.first { $0.0 == "silences" }?.1 == 1)
            #expect(status.counts.first { $0.0 == "backfill_ledger" }?.1 == 2)
            await a.close()
            await b.close()
        }
    }

    @Test func thePasswordAppearsInNoLogAndNoError() async throws {
        try await PostgresServer.with { server in
            let capture = CapturingLogHandler()
            let logger = {
                var logger = capture.logger(label: "pricealert.postgres"); logger.logLevel = .trace; return logger
            }()
            var said: [String] = []
            // A wrong password: the error says what the server said, not what was sent.
            do {
                _ = try await PostgresStore.open(
                    PostgresURL(server.url(password: server.password + "x")), logger: logger)
                Issue.record("a wrong password was accepted")
            } catch {
                said.append("\(error)")
                #expect("\(error)".contains("password authentication failed"))
            }
            // Nothing listening.
            do {
                _ = try await PostgresStore.open(
                    PostgresURL("postgres://pricealert:\(server.password)@127.0.0.1:1/pricealert?sslmode=disable"),
                    logger: logger)
                Issue.record("port 1 answered")
            } catch {
                said.append("\(error)")
                #expect("\(error)".contains("cannot connect"))
            }
            // A whole session, traced.
            let store = try await PostgresStore.open(PostgresURL(server.url()), logger: logger)
            try await store.outbox.enqueue(.event(Self.alert("r")), sinks: ["hook"], now: 1)
            _ = try await store.outbox.claim(sink: "hook", owner: "me", now: 1, lease: 10, limit: 10)
            said.append("\(try await store.status())")
            said.append(store.url.description)
            await store.close()
            said += capture.records.map { "\($0.message) \($0.metadata)" }
            #expect(capture.records.count > 3)
            let leaks = said.filter { $0.contains(server.password) }
            #expect(leaks.isEmpty, "the password appeared in: \(leaks)")
        }
    }

    @Test func tlsFollowsSSLMode() async throws {
        let ca = try PrivateCA()
        defer { ca.remove() }
        try await PostgresServer.with(tls: .init(certificate: ca.valid.certificate, key: ca.valid.key)) { server in
            func encrypted(_ mode: String, extra: String = "") async throws -> Bool {
                // verify-full checks the name the certificate gives: localhost, not 127.0.0.1.
                let host = mode == "verify-full" ? "localhost" : "127.0.0.1"
                let store = try await PostgresStore.open(
                    PostgresURL(server.url(sslMode: mode, extra: extra, host: host)))
                defer { Task { await store.close() } }
                return try await store.usesTLS()
            }
            let modes = [
                ("disable", ""), ("prefer", ""), ("require", ""), ("verify-ca", "&sslrootcert=\(ca.ca)"),
                ("verify-full", "&sslrootcert=\(ca.ca)")
            ]
            var seen: [Bool] = []
            for (mode, extra) in modes { seen.append(try await encrypted(mode, extra: extra)) }
            #expect(seen == [false, true, true, true, true])
            // A CA the certificate does not come from: refused, naming the URL without the password.
            await #expect {
                _ = try await encrypted("verify-full")
            } throws: { error in
                "\(error)".contains("cannot connect") && !"\(error)".contains(server.password)
            }
        }
    }
}

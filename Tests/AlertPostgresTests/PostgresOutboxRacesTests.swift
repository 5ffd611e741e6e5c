import AlertModel
import AlertOutbox
import AlertTestSupport
import Synchronization
import Testing

@testable import AlertPostgres

/// The outbox against a real server while other work goes on beside it: jobs handed over
/// during a group commit, rows delivered while a takeover reads them.
@Suite struct PostgresOutboxRacesTests {
    struct Refused: Error {}

    /// Hands `writes` over while the queue is held, so that they form one group, and returns
    /// once the job holding the queue has let go.
    static func submitAsOneGroup(_ outbox: PostgresOutbox, _ writes: PostgresOutbox.Write...) async throws {
        let (holding, release) = (Gate(), Gate())
        let holder = Task {
            try await outbox.queue.perform { _ in
                holding.open()
                await release.pass()
            }
        }
        await holding.pass()
        for write in writes { outbox.submit(write) }
        release.open()
        try await holder.value
    }

    /// A group that fails together (one of its writes is refused) is made again without the
    /// refused write, which is reported and kept for the next try. A job handed over meanwhile
    /// (here a claim, handed over as soon as the first write's commit is reported) runs only
    /// once the whole group is made: run inside the transaction that makes it again, its leases
    /// would be rolled back with the refused write, and the claimed row claimed, and sent, a
    /// second time.
    @Test func aClaimHandedOverWhileAFailedGroupIsMadeAgainKeepsItsLeases() async throws {
        try await PostgresServer.with { server in
            let (a, b) = (try await PostgresStoreTests.open(server), try await PostgresStoreTests.open(server))
            try await a.outbox.enqueue(.event(PostgresStoreTests.alert("r")), sinks: ["hook"], now: 0)
            // The claim, started when the first write's commit is reported.
            let claim = Mutex<Task<[OutboxEntry], any Error>?>(nil)
            let firstCommitted: @Sendable () -> Void = {
                claim.withLock { claim in
                    claim =
                        claim
                        ?? Task {
                            try await a.outbox.claim(
                                sink: "hook", owner: a.outbox.owner, now: 10, lease: 1_000, limit: 1)
                        }
                }
            }
            let (refusals, refusedTries) = (EventCounter(), EventCounter())
            try await Self.submitAsOneGroup(
                a.outbox,
                PostgresOutbox.Write(
                    apply: { connection, logger in
                        try await connection.query("SELECT 1", logger: logger)
                        return firstCommitted
                    }, failed: { _ in }),
                PostgresOutbox.Write(
                    apply: { _, _ in
                        refusedTries.record()
                        // Were the claim already under way, it would run on this transaction's
                        // connection now: it is let finish before the refusal rolls back.
                        if let running = claim.withLock({ $0 }) { _ = try? await running.value }
                        throw Refused()
                    }, failed: { _ in refusals.record() }))
            let reported = (try? await refusals.wait(for: 1)) != nil
            #expect(reported, "the refused write was neither reported nor kept")
            #expect(refusedTries.count == 2, "once in the group, once again on its own")
            let claimed = try #require(claim.withLock { $0 })
            #expect(try await claimed.value.count == 1)
            // a's lease (until 1 010) holds: b, at 20, finds nothing to claim.
            let taken = try await b.outbox.claim(sink: "hook", owner: b.outbox.owner, now: 20, lease: 1_000, limit: 1)
            #expect(taken.isEmpty, "the row claimed again while a's claim holds it")
            #expect(try await server.query("SELECT locked_by FROM outbox") == "\(a.outbox.owner)\n")
            // Kept: the next commit makes it again (and it is refused again).
            await a.outbox.commit()
            #expect(refusedTries.count == 3)
            await a.close()
            await b.close()
        }
    }

    /// A group that fails together is made again in one transaction (one flush to disk, so the
    /// store's connection is not held by one commit per write), with only the refused write
    /// rolled back: the writes on either side of it commit in the same transaction.
    @Test func aGroupThatFailedTogetherIsMadeAgainInOneTransactionWithoutTheRefusedWrite() async throws {
        try await PostgresServer.with { server in
            let store = try await PostgresStoreTests.open(server)
            let transactions = Mutex<[String: [Int64]]>([:])
            let (refusals, committed) = (EventCounter(), EventCounter())
            @Sendable func write(_ name: String, refused: Bool) -> PostgresOutbox.Write {
                PostgresOutbox.Write(
                    apply: { connection, logger in
                        let rows = try await connection.query("SELECT txid_current()", logger: logger)
                        for try await id in rows.decode(Int64.self) {
                            transactions.withLock { $0[name, default: []].append(id) }
                        }
                        if refused { throw Refused() }
                        try await connection.query("CREATE TABLE IF NOT EXISTS made (name TEXT)", logger: logger)
                        try await connection.query("INSERT INTO made VALUES (\(name))", logger: logger)
                        return { committed.record() }
                    }, failed: { _ in refusals.record() })
            }
            try await Self.submitAsOneGroup(
                store.outbox, write("first", refused: false), write("refused", refused: true),
                write("last", refused: false))
            try await committed.wait(for: 2)
            try await refusals.wait(for: 1)
            let seen = transactions.withLock { $0 }
            // The group stopped at the refusal; then all three were made again.
            #expect(seen.mapValues(\.count) == ["first": 2, "refused": 2, "last": 1], "\(seen)")
            #expect(seen["first"]?.last == seen["last"]?.last, "made again in one transaction: \(seen)")
            #expect(seen["first"]?.last == seen["refused"]?.last)
            #expect(try await server.query("SELECT name FROM made ORDER BY name") == "first\nlast\n")
            await store.close()
        }
    }

    /// A takeover's read of the rows an earlier leader left (`adopt`) reads the rows, then their
    /// alerts. A row another process delivers between the two reads (its alerts released with
    /// it) is left out, and the read goes on; a row still there without its alerts is an error.
    @Test func aRowDeliveredWhileATakeoverReadsTheRowsIsLeftOut() async throws {
        try await PostgresServer.with { server in
            let (a, b) = (try await PostgresStoreTests.open(server), try await PostgresStoreTests.open(server))
            let lease = try #require(try await a.leadership.acquire(source: "s", instance: "a", ttl: 60_000))
            let (gone, kept) = (PostgresStoreTests.alert("r"), PostgresStoreTests.alert("q"))
            let goneRow = try #require(try await a.outbox.enqueue(.event(gone), sinks: ["hook"], now: 0).first)
            let keptRow = try #require(try await a.outbox.enqueue(.event(kept), sinks: ["hook"], now: 0).first)
            let (locked, deliver) = (Gate(), Gate())
            // b delivers the first row, as `record(.delivered)` does (the row and its alert go),
            // in a transaction that holds the alerts table from before a reads the rows until
            // after: a's read of the rows sees the row, its read of the alerts waits for b.
            let logger = b.outbox.queue.logger
            let delivery = Task {
                try await b.outbox.queue.perform { connection in
                    try await PostgresQueue.write(connection, logger) { connection in
                        try await connection.query("LOCK TABLE alerts IN ACCESS EXCLUSIVE MODE", logger: logger)
                        locked.open()
                        await deliver.pass()
                        try await connection.query("DELETE FROM outbox WHERE id = \(goneRow.id)", logger: logger)
                        try await connection.query("DELETE FROM alerts WHERE id = \(gone.id)", logger: logger)
                    }
                }
            }
            await locked.pass()
            let read = Task { try await a.outbox.adopt(lease.fence, now: 1) }
            try await server.waitUntil(
                "SELECT COUNT(*) > 0 FROM pg_locks WHERE NOT granted AND relation = 'alerts'::regclass")
            deliver.open()
            try await delivery.value
            #expect(try await read.value.map(\.id) == [keptRow.id])
            await a.close()
            await b.close()
        }
    }
}

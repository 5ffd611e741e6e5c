import AlertModel
import Dispatch
import Foundation
import GRDB
import Synchronization
import Testing

@testable import AlertStore

/// The outbox's writer: what queues up while a transaction commits goes into the next one,
/// in order, and one bad write does not take its group down.
@Suite struct GroupCommitTests {
    /// Holds the writer inside a transaction until the returned gate is signalled.
    func holdWriter(_ outbox: Outbox) -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        outbox.writer.submit(GroupCommitter.stall(until: gate))
        return gate
    }

    @Test func enqueuesQueuedDuringACommitShareTheNextTransactionInOrder() async throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        let gate = holdWriter(store.outbox)
        let ids = Mutex<[Int64]>([])
        for i in 0..<200 {
            store.outbox.enqueue(alert("r\(i % 7)", time: Int64(i)), sinks: ["hook"], now: 1) { result in
                ids.withLock { $0 += (try? result.get().map(\.id)) ?? [-1] }
            }
        }
        // Nothing is visible before its commit.
        #expect(try store.outbox.depth() == 0)
        gate.signal()
        await store.outbox.commit()
        // The held transaction, one for the 200 alerts, perhaps one for the barrier: not 200.
        #expect(store.outbox.writer.transactions <= 3)
        let committed = ids.withLock { $0 }
        #expect(committed.count == 200 && committed == committed.sorted() && !committed.contains(-1))
        #expect(try store.outbox.pending().map(\.alert.time) == (0..<200).map { Int64($0) })
    }

    @Test func aWriteThatFailsDoesNotTakeItsGroupDown() async throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        defer { store.close() }
        try await DatabaseQueue(path: folder.databasePath).write { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER refuse BEFORE INSERT ON outbox WHEN NEW.sink = 'broken'
                    BEGIN SELECT RAISE(ABORT, 'refused'); END
                    """)
        }
        let gate = holdWriter(store.outbox)
        let results = Mutex<[String]>([])
        for (rule, sink) in [("a", "hook"), ("b", "broken"), ("c", "hook")] {
            store.outbox.enqueue(alert(rule), sinks: [sink], now: 1) { result in
                let outcome =
                    switch result {
                    case .success(let rows): "\(rule): \(rows.count) row"
                    case .failure: "\(rule): failed"
                    }
                results.withLock { $0.append(outcome) }
            }
        }
        gate.signal()
        await store.outbox.commit()
        #expect(results.withLock { $0 } == ["a: 1 row", "b: failed", "c: 1 row"])
        #expect(try store.outbox.pending().map(\.alert.rule) == ["a", "c"])
    }

    @Test func anOutcomeThatCannotBeWrittenIsWrittenWithALaterGroup() async throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        defer { store.close() }
        let row = try #require(try store.outbox.enqueue(alert("a"), sinks: ["hook"], now: 1).first)
        try store.outbox.enqueue(alert("b"), sinks: ["hook"], now: 1)
        let other = try DatabaseQueue(path: folder.databasePath)
        try await other.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE disk_full (x);
                    INSERT INTO disk_full VALUES (1);
                    CREATE TRIGGER refuse BEFORE DELETE ON outbox WHEN EXISTS (SELECT 1 FROM disk_full)
                    BEGIN SELECT RAISE(ABORT, 'disk full'); END
                    """)
        }
        let failures = Mutex(0)
        store.outbox.record([row.id], .delivered, committed: { _ in }, failed: { _ in failures.withLock { $0 += 1 } })
        await store.outbox.commit()
        #expect(failures.withLock { $0 } == 1)
        #expect(try store.outbox.depth() == 2)
        // The disk has room again: the next group writes the kept outcome, without a second report.
        try await other.write { db in try db.execute(sql: "DELETE FROM disk_full") }
        await store.outbox.commit()
        #expect(failures.withLock { $0 } == 1)
        #expect(try store.outbox.pending().map(\.alert.rule) == ["b"])
    }

    /// A pool on a fresh file with one table, and a writer whose lazy writes wait `lazyDelay`.
    func lazyWriter(_ lazyDelay: DispatchTimeInterval) throws -> (DatabasePool, GroupCommitter) {
        let folder = temporaryFolder()
        try folder.create()
        let pool = try DatabasePool(path: folder.databasePath)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER)") }
        return (pool, GroupCommitter(database: pool, lazyDelay: lazyDelay))
    }

    func insert(_ x: Int, lazy: Bool) -> GroupCommitter.Write {
        GroupCommitter.Write(
            apply: { db in
                try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [x])
                return {}
            }, failed: { _ in }, lazy: lazy)
    }

    func rows(_ pool: DatabasePool) throws -> [Int] {
        try pool.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") }
    }

    /// A lazy write (a "delivered") is not a transaction of its own: it goes with the next write
    /// that must be durable, in order, and is written before closing.
    @Test func aLazyWriteWaitsForTheNextWriteAndForClosing() async throws {
        let (pool, writer) = try lazyWriter(.seconds(3600))
        writer.submit(insert(1, lazy: true))
        try await Task.sleep(for: .milliseconds(50))
        #expect(try rows(pool) == [] && writer.transactions == 0)
        writer.submit(insert(2, lazy: false))
        await writer.barrier()
        #expect(try rows(pool) == [1, 2])
        #expect(writer.transactions <= 2) // the eager write's group, perhaps one for the barrier
        writer.submit(insert(3, lazy: true))
        writer.waitBlocking()
        #expect(try rows(pool) == [1, 2, 3])
    }

    /// With nothing else to join, a lazy write is committed on its own after `lazyDelay`.
    @Test func aLazyWriteAloneIsCommittedAfterItsDelay() async throws {
        let (pool, writer) = try lazyWriter(.milliseconds(20))
        writer.submit(insert(1, lazy: true))
        let deadline = ContinuousClock.now + .seconds(60)
        while try rows(pool).isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(try rows(pool) == [1])
        #expect(writer.transactions == 1)
    }
}

import AlertModel
import AlertPolicy
import Foundation
import GRDB
import Testing

@testable import AlertStore

/// Schema 7: rows are deliveries (an event or a digest of alert ids) per sink, each alert
/// stored once; a folder of schema 6 keeps every pending row and dead letter.
@Suite struct OutboxDeliveryRowsTests {
    @Test func anAlertIsStoredOnceForEverySinkAndGoesWithItsLastRow() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        let a = alert("a", time: 1), b = alert("b", time: 2)
        let rows = try store.outbox.enqueue(.event(a), sinks: ["hook", "chat"], now: 10)
        try store.outbox.enqueue(.digest(Digest(sink: "chat", events: [a, b], held: true)), sinks: ["chat"], now: 11)
        #expect(try store.outbox.storedAlerts() == 2)
        let pending = try store.outbox.pending()
        #expect(pending.map(\.deliveryID) == [a.id, a.id, "digest:chat:" + a.id])
        #expect(pending[2].delivery == .digest(Digest(sink: "chat", events: [a, b], held: true)))
        try store.outbox.record(rows.map(\.id), .delivered)
        #expect(try store.outbox.storedAlerts() == 2) // the digest still names both
        try store.outbox.record(pending[2].id, .delivered)
        #expect(try store.outbox.storedAlerts() == 0)
        #expect(try store.outbox.depth() == 0)
    }

    @Test func aDeadLetterWithAFallbackIsPutInTheOutboxForItWithTheSameID() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        let digest = Digest(sink: "chat", events: [alert("a", time: 1), alert("b", time: 2)])
        let rows = try store.outbox.enqueue(.digest(digest), sinks: ["chat"], urgent: true, now: 10)
        let moved = try store.outbox.record(
            rows.map(\.id), .dead(reason: "HTTP 410", lastError: "HTTP 410", at: 20, fallback: "mail"))
        #expect(moved.map(\.sink) == ["mail"])
        #expect(moved.map(\.deliveryID) == ["digest:chat:a:BTC:1"])
        #expect(try store.outbox.pending().map(\.delivery) == [.digest(digest)])
        #expect(try store.outbox.pending().map(\.urgent) == [true])
        let dead = try store.outbox.dead()
        #expect(dead.map(\.sink) == ["chat"] && dead.map(\.deadReason) == ["HTTP 410"] && dead.map(\.attempts) == [1])
        try store.outbox.record(moved[0].id, .delivered)
        #expect(try store.outbox.storedAlerts() == 2) // the dead letter names them
        try store.outbox.purge(dead: true, all: false)
        #expect(try store.outbox.storedAlerts() == 0)
    }

    /// A folder written by the schema-6 binary (its migrations, which are never edited, run up
    /// to `v6-event-kinds`): every pending row and dead letter is there after the upgrade, with
    /// its attempts, times and errors, and each alert is stored once.
    @Test func aSchemaSixFolderKeepsEveryRowAndDeadLetter() throws {
        let folder = temporaryFolder()
        try folder.create()
        let queue = try DatabaseQueue(path: folder.databasePath)
        try StateStore.migrator.migrate(queue, upTo: "v6-event-kinds")
        try queue.write { db in
            let insert = """
                INSERT INTO outbox (alert_id, rule, symbol, sink, time, price, condition, threshold_low,
                  threshold_high, value, message, notify, payload, created_at, attempts, next_attempt_at, last_error,
                  kind, reminder, threshold_null)
                VALUES (?, ?, 'BTC', ?, ?, 99, 'price above 90', 90, NULL, 99, 'm', 'hook\nchat', '{}', ?, ?, ?, ?, ?, ?, ?)
                """
            try db.execute(sql: insert, arguments: ["a:BTC:5", "a", "hook", 5, 5, 0, 5, nil, "alert", nil, 0])
            try db.execute(sql: insert, arguments: ["a:BTC:5", "a", "chat", 5, 5, 3, 900, "HTTP 503", "alert", nil, 0])
            try db.execute(
                sql: insert, arguments: ["b:BTC:6:resolved", "b", "hook", 6, 6, 1, 60, "timeout", "resolved", nil, 1])
            try db.execute(
                sql: """
                    INSERT INTO dead_letters (alert_id, rule, symbol, sink, time, price, condition, threshold_low,
                      threshold_high, value, message, notify, payload, created_at, attempts, last_error, reason, died_at,
                      kind, reminder, threshold_null)
                    VALUES ('c:BTC:7', 'c', 'BTC', 'hook', 7, 99, 'price in band', 1, 2, 99, 'm', 'hook', '{}', 7, 4,
                      'HTTP 410', 'HTTP 410', 70, 'reminder', 2, 0)
                    """)
        }
        try queue.close()
        let store = try StateStore.open(folder)
        defer { store.close() }
        let pending = try store.outbox.pending()
        #expect(pending.map(\.id) == [1, 2, 3])
        #expect(pending.map(\.sink) == ["hook", "chat", "hook"])
        #expect(pending.map(\.deliveryID) == ["a:BTC:5", "a:BTC:5", "b:BTC:6:resolved"])
        #expect(pending.map(\.attempts) == [0, 3, 1])
        #expect(pending.map(\.nextAttemptAt) == [5, 900, 60])
        #expect(pending.map(\.lastError) == [nil, "HTTP 503", "timeout"])
        #expect(pending.map(\.urgent) == [false, false, false])
        #expect(pending[0].alert.notify == ["hook", "chat"])
        #expect(pending[2].alert.kind == .resolved && pending[2].alert.threshold == Threshold.none)
        let dead = try store.outbox.dead()
        #expect(dead.map(\.deliveryID) == ["c:BTC:7"])
        #expect(
            dead.map(\.deadReason) == ["HTTP 410"] && dead.map(\.attempts) == [4] && dead.map(\.nextAttemptAt) == [70])
        #expect(dead[0].alert.threshold == .range(1, 2) && dead[0].alert.reminder == 2)
        #expect(try store.outbox.storedAlerts() == 3)
        // New rows come after the old ones, and delivering the old ones releases their alerts.
        let next = try store.outbox.enqueue(alert("d", time: 8), sinks: ["hook"], now: 8)
        #expect(next.map(\.id) == [4])
        try store.outbox.record(pending.map(\.id), .delivered)
        #expect(try store.outbox.storedAlerts() == 2)
    }
}

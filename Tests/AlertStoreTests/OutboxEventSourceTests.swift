import AlertEngine
import AlertModel
import Foundation
import GRDB
import Testing

@testable import AlertStore

/// Events of ticks with a source (rules v3 §6) through the outbox: a redelivered event keeps its
/// `source` and so its id and payload; a folder written before the column existed opens with
/// its rows, whose events have no source.
@Suite struct OutboxEventSourceTests {
    static func sourced(_ occurrence: Int = 1) -> Alert {
        var a = alert("btc-100k", time: 7)
        a.source = "binance"
        a.occurrence = occurrence
        return a
    }

    @Test func aRowKeepsTheSourceItsIdAndItsPayload() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        let event = Self.sourced(2)
        try store.outbox.enqueue(event, sinks: ["hook"], now: 10)
        let rows = try store.outbox.pending()
        #expect(rows.map(\.alert) == [event])
        #expect(rows.first?.alert.id == "btc-100k:binance:BTC:7:2")
        #expect(rows.first?.payload == AlertFormat.json(event))
        #expect(rows.first?.payload.contains(#""rule":"btc-100k","source":"binance","symbol":"BTC""#) == true)
        try store.outbox.record(rows[0].id, .dead(reason: "gone", lastError: nil, at: 20))
        #expect(try store.outbox.dead().map(\.alert) == [event])
    }

    /// A folder at schema 9 with a pending row: after this binary opens it, the row is there,
    /// its event without a source, and new rows keep theirs.
    @Test func aSchemaNineFolderKeepsItsRows() throws {
        let folder = temporaryFolder()
        try folder.create()
        let queue = try DatabaseQueue(path: folder.databasePath)
        try StateStore.migrator.migrate(queue, upTo: "v9-policy-pending-stage")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO alerts (id, refs, rule, symbol, time, price, condition, threshold_low, threshold_high,
                      value, message, notify)
                    VALUES ('r:BTC:5', 1, 'r', 'BTC', 5, 99, 'price above 90', 90, NULL, 99, 'm', 'hook');
                    INSERT INTO outbox (sink, delivery_id, alerts, created_at, next_attempt_at)
                    VALUES ('hook', 'r:BTC:5', 'r:BTC:5', 5, 5);
                    """)
        }
        try queue.close()
        let store = try StateStore.open(folder)
        defer { store.close() }
        #expect(try store.outbox.pending().map(\.alert.id) == ["r:BTC:5"])
        #expect(try store.outbox.pending().first?.alert.source == nil)
        try store.outbox.enqueue(Self.sourced(), sinks: ["hook"], now: 10)
        #expect(try store.outbox.pending().map(\.alert.id) == ["r:BTC:5", "btc-100k:binance:BTC:7"])
    }
}

import AlertEngine
import AlertModel
import Foundation
import GRDB
import Testing

@testable import AlertStore

/// Version 2 events through the outbox: a row rebuilds the event's kind, reminder number and
/// null threshold, and a state folder written before those columns existed opens with its rows
/// and symbol state.
@Suite struct OutboxEventKindTests {
    @Test func remindersResolvedAndNullThresholdsSurviveTheOutbox() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        var reminder = alert("both", time: 1, threshold: .none)
        reminder.kind = .reminder
        reminder.reminder = 3
        var resolved = alert("band", time: 2, threshold: .range(1, 2))
        resolved.kind = .resolved
        try store.outbox.enqueue(reminder, sinks: ["hook"], now: 10)
        try store.outbox.enqueue(resolved, sinks: ["hook"], now: 10)
        let rows = try store.outbox.pending()
        #expect(rows.map(\.alert) == [reminder, resolved])
        #expect(rows[1].alert.id == "band:BTC:2:resolved")
        #expect(rows[0].payload.contains(#""kind":"reminder","reminder":3,"#))
        #expect(rows[0].payload.contains(#""threshold":null"#))
        // A dead letter keeps them too.
        try store.outbox.record(rows[0].id, .dead(reason: "gone", lastError: nil, at: 20))
        #expect(try store.outbox.dead().map(\.alert) == [reminder])
    }

    /// A folder at schema 5 (what the binary before version 2 rules writes) with a pending
    /// row and a version 1 symbol snapshot: both are there after this binary opens it.
    @Test func aSchemaFiveFolderKeepsItsRowsAndState() throws {
        let folder = temporaryFolder()
        try folder.create()
        let queue = try DatabaseQueue(path: folder.databasePath)
        try StateStore.migrator.migrate(queue, upTo: "v5-history-by-hour")
        let saved = SymbolSnapshot(
            symbol: "BTC", firstTime: 1, lastTime: 5, lastPrice: 99,
            pairs: [PairSnapshot(rule: "r", fingerprint: 42, armed: false, spent: false, lastFired: 5)])
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO outbox (alert_id, rule, symbol, sink, time, price, condition, threshold_low,
                      threshold_high, value, message, notify, payload, created_at, attempts, next_attempt_at)
                    VALUES ('r:BTC:5', 'r', 'BTC', 'hook', 5, 99, 'price above 90', 90, NULL, 99, 'm', 'hook', '{}', 5, 0, 5)
                    """)
            try db.execute(
                sql: "INSERT INTO symbol_state (symbol, snapshot, saved_at) VALUES (?, ?, 5)",
                arguments: ["BTC", Data(saved.encoded())])
        }
        try queue.close()
        let store = try StateStore.open(folder)
        defer { store.close() }
        let rows = try store.outbox.pending()
        #expect(rows.map(\.alert.kind) == [.alert])
        #expect(rows.first?.alert.threshold == .value(90))
        #expect(rows.first?.alert.reminder == nil)
        #expect(try store.engineState.load() == [saved])
    }
}

import AlertModel
import Foundation
import Testing

@testable import AlertStore

@Suite struct PolicyStateStoreTests {
    /// Rows come back in `seq` order with every field of the event, across a reopen; removals
    /// delete one (sink, event) and leave the same event held for another sink.
    @Test func heldEventsSurviveAReopenInOrderAndRemovalsTakeOneSink() async throws {
        let folder = temporaryFolder()
        let combined = Alert(
            rule: "both", symbol: "ETH", time: 1_700_000_000_500, price: 2000, condition: "all",
            threshold: .none, value: 2000, message: "m", notify: ["night", "grouped"],
            kind: .reminder, reminder: 3)
        let ranged = alert(time: 1_700_000_000_000, notify: ["night", "grouped"], threshold: .range(1, 2))
        let rows: [PolicyStateStore.Pending] = [
            .init(seq: 0, sink: "night", alert: ranged),
            .init(seq: 1, sink: "grouped", alert: ranged),
            .init(seq: 7, sink: "night", alert: combined)
        ]
        do {
            let store = try StateStore.open(folder)
            store.policyState.record(added: rows, removed: [])
            store.policyState.record(added: [], removed: [(sink: "night", eventID: ranged.id)])
            await store.outbox.commit()
            #expect(store.policyState.unwritten == nil)
            store.close()
        }
        let store = try StateStore.open(folder)
        defer { store.close() }
        #expect(try await store.policyState.load() == [rows[1], rows[2]])
    }

    /// Whether quiet hours hold a row or a digest keeps it is stored with it, and `list()`
    /// reads the rows also from a folder opened read only beside its writer.
    @Test func rowsSayWhetherQuietHoursHoldThemAndAReaderListsThem() async throws {
        let folder = temporaryFolder()
        let rows: [PolicyStateStore.Pending] = [
            .init(
                seq: 0, sink: "night", alert: alert(time: 1_700_000_000_000, notify: ["night", "grouped"]), quiet: true),
            .init(
                seq: 1, sink: "grouped", alert: alert(time: 1_700_000_000_000, notify: ["night", "grouped"]),
                quiet: false)
        ]
        let store = try StateStore.open(folder)
        defer { store.close() }
        store.policyState.record(added: rows, removed: [])
        await store.outbox.commit()
        #expect(try store.policyState.list() == rows)
        #expect(try await store.policyState.load() == rows)
        let reader = try #require(try StateStore.openForReading(folder))
        defer { reader.close() }
        #expect(try reader.policyState.list().map(\.quiet) == [true, false])
    }

    @Test func aNewDatabaseIsAtTheCurrentSchemaWithThePolicyTable() async throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        #expect(StateStore.schemaVersion == 10)
        #expect(try await store.policyState.load().isEmpty)
    }
}

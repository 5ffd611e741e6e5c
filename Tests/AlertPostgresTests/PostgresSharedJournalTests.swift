import AlertModel
import AlertOutbox
import AlertStore
import AlertTestSupport
import Foundation
import Synchronization
import Testing

@testable import AlertPostgres

/// The shared policy journal of several `run`s on one store
/// (Docs/postgres.md#digests-and-quiet-hours-across-instances), against a real server: leaders
/// journal under their source's fence, the home lease's leader enters a digest under its own
/// and removes its events in the same transaction, and an owner taken over writes nothing.
@Suite("PostgreSQL: the policy journal shared by several instances")
struct PostgresSharedJournalTests {
    /// The epochs one instance leads, as `LeadershipService` would say.
    final class Epochs: Sendable {
        let value = Mutex<[String: Int64]>([:])
    }

    /// A store of instance `name`, fenced with home lease `binance` and source `kraken`; `ops`
    /// is the staged sink. `handedBack` gets the ids of each batch of events the store hands
    /// back (another instance leads their lease).
    static func instance(
        _ server: PostgresServer, _ name: String, handedBack: PostgresFencedStoreTests.HandedBack? = nil
    ) async throws -> (PostgresStore, Epochs) {
        let store = try await PostgresStoreTests.open(server)
        let epochs = Epochs()
        store.fence(
            with: SourceLeases(home: "binance", sources: ["kraken"]) { lease in epochs.value.withLock { $0[lease] } },
            instance: name, staged: ["ops"]
        ) { alerts, epoch in handedBack?.all.withLock { $0.append((alerts.map(\.id), epoch)) } }
        return (store, epochs)
    }

    static func lead(_ store: PostgresStore, _ epochs: Epochs, _ source: String, as name: String) async throws {
        let lease = try #require(try await store.leadership.acquire(source: source, instance: name, ttl: 60_000))
        epochs.value.withLock { $0[source] = lease.epoch }
    }

    static func event(_ rule: String, source: String? = nil, time: Int64) -> Alert {
        var alert = PostgresStoreTests.alert(rule, time: time)
        alert.source = source
        alert.notify = ["ops"]
        return alert
    }

    static func journal(_ store: PostgresStore, _ alerts: [Alert]) async {
        store.journal.record(
            added: alerts.map { PolicyStateStore.Pending(seq: 0, sink: "ops", alert: $0, quiet: nil) }, removed: [])
        await store.outbox.commit()
    }

    /// Enters `delivery` for `ops` and returns the rows made (none when the fence refused it).
    static func enter(_ store: PostgresStore, _ delivery: Delivery) async throws -> [OutboxEntry] {
        try await withCheckedThrowingContinuation { continuation in
            store.outbox.enqueue(delivery, sinks: ["ops"], urgent: false, now: 1) { continuation.resume(with: $0) }
        }
    }

    @Test func theOwnerEntersADigestOnceAndItsEventsLeaveTheJournal() async throws {
        try await PostgresServer.with { server in
            let (a, aEpochs) = try await Self.instance(server, "a")
            let (b, bEpochs) = try await Self.instance(server, "b")
            try await Self.lead(a, aEpochs, "binance", as: "a")
            try await Self.lead(b, bEpochs, "kraken", as: "b")
            let (home, sourced) = (Self.event("up", time: 1), Self.event("up", source: "kraken", time: 2))
            // Each leader journals its own source's event; b's event of a's source is dropped.
            await Self.journal(a, [home])
            await Self.journal(b, [sourced, Self.event("down", time: 3)])
            #expect(a.journal.unwritten == nil && b.journal.unwritten == nil)
            #expect(try await a.journal.load().map(\.alert) == [home, sourced])

            // The owner (a, leading the home lease) closes the digest of both.
            let digest = Delivery(sink: "ops", events: [home, sourced])
            #expect(try await Self.enter(a, digest).map(\.delivery.id) == ["digest:ops:\(home.id)"])
            #expect(try await a.journal.load().isEmpty)
            // The same digest closed again (a new owner, from the same rows) is not entered twice,
            // and a leader that evaluates an event again after a takeover does not journal it.
            #expect(try await Self.enter(a, digest).isEmpty)
            await Self.journal(b, [sourced])
            #expect(try await b.journal.load().isEmpty)
            #expect(try await server.query("SELECT COUNT(*) FROM outbox") == "1\n")
            await a.close()
            await b.close()
        }
    }

    @Test func anOwnerTakenOverEntersAndRemovesNothing() async throws {
        try await PostgresServer.with { server in
            let handedBack = PostgresFencedStoreTests.HandedBack()
            let (a, aEpochs) = try await Self.instance(server, "a", handedBack: handedBack)
            let (b, bEpochs) = try await Self.instance(server, "b")
            // a led the home lease in epoch 1; it ran out, and b took it in epoch 2.
            let old = try #require(try await a.leadership.acquire(source: "binance", instance: "a", ttl: 1, now: 0))
            aEpochs.value.withLock { $0["binance"] = old.epoch }
            let held = [Self.event("up", time: 1), Self.event("up", time: 2)]
            await Self.journal(a, held)
            try await Self.lead(b, bEpochs, "binance", as: "b")

            #expect(try await Self.enter(a, Delivery(sink: "ops", events: held)).isEmpty)
            a.journal.record(added: [], removed: held.map { (sink: "ops", eventID: $0.id) })
            await a.outbox.commit()
            #expect(try await server.query("SELECT COUNT(*) FROM outbox") == "0\n")
            #expect(try await b.journal.load().map(\.alert) == held)

            // The new owner enters the digest it rebuilt from the rows, under its epoch.
            let rows = try await Self.enter(b, Delivery(sink: "ops", events: held))
            #expect(rows.map(\.delivery.id) == ["digest:ops:\(held[0].id)"])
            #expect(try await b.journal.load().isEmpty)
            #expect(try await server.query("SELECT DISTINCT epoch FROM outbox_ledger") == "2\n")
            // A stage's digest is no event of a's evaluator: its events are in the journal.
            #expect(handedBack.all.withLock { $0.isEmpty })
            await a.close()
            await b.close()
        }
    }

    /// a evaluated kraken's events as its leader after b had taken kraken over: the journal
    /// drops them and hands each event back once (it had a row per staged sink), with b's epoch.
    @Test func eventsNotJournalledUnderALeaseTakenOverAreHandedBackOnce() async throws {
        try await PostgresServer.with { server in
            let handedBack = PostgresFencedStoreTests.HandedBack()
            let (a, aEpochs) = try await Self.instance(server, "a", handedBack: handedBack)
            let (b, bEpochs) = try await Self.instance(server, "b")
            let old = try #require(try await a.leadership.acquire(source: "kraken", instance: "a", ttl: 1, now: 0))
            aEpochs.value.withLock { $0["kraken"] = old.epoch }
            try await Self.lead(b, bEpochs, "kraken", as: "b")
            let events = [Self.event("up", source: "kraken", time: 1), Self.event("up", source: "kraken", time: 2)]
            a.journal.record(
                added: events.flatMap { alert in
                    ["ops", "page"].map { PolicyStateStore.Pending(seq: 0, sink: $0, alert: alert, quiet: nil) }
                }, removed: [])
            await a.outbox.commit()
            #expect(try await server.query("SELECT COUNT(*) FROM policy_pending") == "0\n")
            let back = handedBack.all.withLock { $0 }
            #expect(back.map(\.ids) == [events.map(\.id)])
            #expect(back.map(\.epoch) == [2])
            await a.close()
            await b.close()
        }
    }
}

import AlertEngine
import AlertModel
import AlertOutbox
import AlertStore
import AlertTestSupport
import Foundation
import Synchronization
import Testing

@testable import AlertPostgres

/// `run`'s writes on a shared store (`PostgresStore.fence(with:instance:)`): the outbox insert
/// and the engine save of a lease this instance does not lead right now are kept when the lease
/// is still its own (made once it leads again) and dropped when another instance took it over.
@Suite("PostgreSQL: fenced writes of run")
struct PostgresFencedStoreTests {
    /// The epoch this test's instance leads `binance` under, as `LeadershipService` would say.
    final class Epoch: Sendable {
        let value = Mutex<Int64?>(nil)
    }

    /// Every outcome the outbox reports for one insert, in order: a kept write reports its
    /// failure, then its success once made.
    final class Outcomes: Sendable {
        let all = Mutex<[Result<[OutboxEntry], any Error>]>([])
        let first = Mutex<CheckedContinuation<Result<[OutboxEntry], any Error>, Never>?>(nil)

        func report(_ result: Result<[OutboxEntry], any Error>) {
            all.withLock { $0.append(result) }
            first.withLock { $0.take() }?.resume(returning: result)
        }
    }

    /// Enters `alert`; returns its first outcome and where later ones go.
    static func enqueue(_ store: PostgresStore, _ alert: Alert) async -> (Result<[OutboxEntry], any Error>, Outcomes) {
        let outcomes = Outcomes()
        let first = await withCheckedContinuation { continuation in
            outcomes.first.withLock { $0 = continuation }
            store.outbox.enqueue(.event(alert), sinks: ["hook"], urgent: false, now: 1) { outcomes.report($0) }
        }
        return (first, outcomes)
    }

    /// What the store handed back: events dropped because another instance leads, with its epoch.
    final class HandedBack: Sendable {
        let all = Mutex<[(ids: [String], epoch: Int64?)]>([])
    }

    static func fenced(_ server: PostgresServer) async throws -> (PostgresStore, Epoch, HandedBack) {
        let store = try await PostgresStoreTests.open(server)
        let epoch = Epoch()
        let handedBack = HandedBack()
        store.fence(
            with: SourceLeases(home: "binance", sources: []) { _ in epoch.value.withLock { $0 } }, instance: "a"
        ) { alerts, epoch in handedBack.all.withLock { $0.append((alerts.map(\.id), epoch)) } }
        return (store, epoch, handedBack)
    }

    @Test func aWriteRefusedWhileTheLeaseIsStillOursIsKeptAndMadeOnceWeLeadAgain() async throws {
        try await PostgresServer.with { server in
            let (store, epoch, handedBack) = try await Self.fenced(server)
            // "a" led in epoch 1; its lease has run out (the database was away), and no one took it.
            _ = try #require(try await store.leadership.acquire(source: "binance", instance: "a", ttl: 1, now: 0))
            let (result, outcomes) = await Self.enqueue(store, PostgresStoreTests.alert("up"))
            guard case .failure(let error) = result else {
                Issue.record("written while not leading: \(result)")
                return
            }
            #expect("\(error)".contains("not led by this instance right now"), "\(error)")
            await #expect(throws: (any Error).self) {
                try await store.engineState.save([SymbolSnapshot(symbol: "BTC-USD")], markets: nil, now: 1)
            }
            #expect(try await server.query("SELECT COUNT(*) FROM outbox_ledger") == "0\n")

            // "a" takes the source back: what it kept goes in under the new epoch.
            let lease = try #require(try await store.leadership.acquire(source: "binance", instance: "a", ttl: 60_000))
            epoch.value.withLock { $0 = lease.epoch }
            await store.outbox.commit()
            let made = outcomes.all.withLock { $0 }.last.flatMap { try? $0.get() }
            #expect(made?.map(\.sink) == ["hook"])
            try await store.engineState.save([SymbolSnapshot(symbol: "BTC-USD")], markets: nil, now: 2)
            #expect(try await server.query("SELECT epoch, COUNT(*) FROM outbox_ledger GROUP BY epoch") == "2|1\n")
            #expect(try await store.outbox.pending().map(\.delivery.id) == [PostgresStoreTests.alert("up").id])
            #expect(try await server.query("SELECT COUNT(*) FROM engine_symbols") == "1\n")
            // Kept and made, never handed back: no other instance led.
            #expect(handedBack.all.withLock { $0.isEmpty })
            await store.close()
        }
    }

    /// Dropped, and handed back to the evaluator with b's epoch once the transaction that
    /// refused it committed: a leader paused past its lease evaluated it as leader, so only it
    /// holds it (b's standby did not keep it).
    @Test func aWriteRefusedBecauseAnotherInstanceTookOverIsDroppedAndHandedBack() async throws {
        try await PostgresServer.with { server in
            let (store, _, handedBack) = try await Self.fenced(server)
            _ = try #require(try await store.leadership.acquire(source: "binance", instance: "a", ttl: 1, now: 0))
            _ = try #require(try await store.leadership.acquire(source: "binance", instance: "b", ttl: 60_000))
            let (result, _) = await Self.enqueue(store, PostgresStoreTests.alert("up"))
            guard case .success(let rows) = result else {
                Issue.record("kept, though b leads: \(result)")
                return
            }
            #expect(rows.isEmpty)
            try await store.engineState.save([SymbolSnapshot(symbol: "BTC-USD")], markets: nil, now: 1)
            await store.outbox.commit()
            #expect(try await server.query("SELECT COUNT(*) FROM outbox_ledger") == "0\n")
            #expect(try await server.query("SELECT COUNT(*) FROM outbox") == "0\n")
            #expect(try await server.query("SELECT COUNT(*) FROM engine_symbols") == "0\n")
            let back = handedBack.all.withLock { $0 }
            #expect(back.map(\.ids) == [[PostgresStoreTests.alert("up").id]])
            #expect(back.map(\.epoch) == [2])
            await store.close()
        }
    }
}

import AlertModel
import AlertTestSupport
import Testing

@testable import AlertPostgres

/// A sink's rate shared by several deliverers, against a real server; times are given as
/// `now` (an injected clock in epoch ms).
@Suite struct PostgresSinkRatesTests {
    @Test func deliverersTogetherStartNoMoreThanTheRate() async throws {
        try await PostgresServer.with { server in
            let stores = try await withThrowingTaskGroup(of: PostgresStore.self) { group in
                for _ in 0..<8 { group.addTask { try await PostgresStoreTests.open(server) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let rate = RateSpec(count: 2, per: 1_000)
            // The sink's row exists (an attempt long ago), so only its lock orders what follows.
            #expect(
                try await stores[0].sinkRates.begin(sink: "telegram", rate: rate, lease: 1, now: -10_000)
                    == .start(-10_000))
            // 24 attempts from eight deliverers at the same moment: two start.
            let decisions = try await withThrowingTaskGroup(of: PostgresSinkRates.Decision.self) { group in
                for n in 0..<24 {
                    let store = stores[n % 8]
                    group.addTask {
                        try await store.sinkRates.begin(sink: "telegram", rate: rate, lease: 30_000, now: 0)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(decisions.filter { $0 == .start(0) }.count == 2)
            // The others wait for an attempt in flight to end.
            #expect(decisions.filter { $0 == .wait(until: .max) }.count == 22)
            // Both end at 100 ms: the window counts from their ends.
            try await stores[1].sinkRates.settle(sink: "telegram", rate: rate, started: 0, now: 100)
            try await stores[2].sinkRates.settle(sink: "telegram", rate: rate, started: 0, now: 100)
            #expect(
                try await stores[0].sinkRates.begin(sink: "telegram", rate: rate, lease: 30_000, now: 1_099)
                    == .wait(until: 1_100))
            #expect(
                try await stores[1].sinkRates.begin(sink: "telegram", rate: rate, lease: 30_000, now: 1_100)
                    == .start(1_100))
            // Another sink has a window of its own.
            #expect(
                try await stores[2].sinkRates.begin(sink: "mail", rate: rate, lease: 30_000, now: 1_100)
                    == .start(1_100))
            for store in stores { await store.close() }
        }
    }

    @Test func aDeadDeliverersAttemptHoldsTheWindowOnlyUntilItsLeaseEnds() async throws {
        try await PostgresServer.with { server in
            let store = try await PostgresStoreTests.open(server)
            let rates = store.sinkRates
            let rate = RateSpec(count: 1, per: 1_000)
            #expect(try await rates.begin(sink: "hook", rate: rate, lease: 500, now: 0) == .start(0))
            // Its deliverer dies: nothing settles it.
            #expect(try await rates.begin(sink: "hook", rate: rate, lease: 500, now: 499) == .wait(until: .max))
            // Its lease ends at 500: it counts as ended then.
            #expect(try await rates.begin(sink: "hook", rate: rate, lease: 500, now: 500) == .wait(until: 1_500))
            #expect(try await rates.begin(sink: "hook", rate: rate, lease: 500, now: 1_500) == .start(1_500))
            #expect(
                try await server.query("SELECT starts, in_flight, in_flight_until FROM sink_rates")
                    == "{500}|{1500}|{2000}\n")
            await store.close()
        }
    }
}

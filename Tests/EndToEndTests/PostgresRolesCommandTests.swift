import AlertModel
import AlertPostgres
import AlertTestSupport
import Foundation
import Testing

/// `pricealert store status` shows each source's leader, epoch and lease, and its standbys:
/// the built binary against a real PostgreSQL server whose leases and heartbeats the test
/// writes as two instances would.
@Suite("end to end: roles in store status", .programs)
struct PostgresRolesCommandTests {
    @Test func statusNamesEachSourcesLeaderEpochAndStandbys() async throws {
        try await PostgresServer.with { server in
            let url = server.url()
            let store = try await PostgresStore.open(try PostgresURL(url))
            let leadership = store.leadership
            // Before any instance: no leadership lines.
            let empty = try await PriceAlertBinary.run(["store", "status", "--store", url])
            #expect(empty.status == 0 && !empty.stdout.contains("source "), "\(empty.stdout)\(empty.stderr)")

            for id in ["host-a-1", "host-b-2"] {
                try await leadership.heartbeat(
                    .init(id: id, host: String(id.dropLast(2)), pid: 1, startedAt: 0, sources: ["binance", "kraken"]))
            }
            // host-a leads binance (the store's clock, a lease of a minute); kraken's lease
            // ran out long ago.
            let lease = try #require(try await leadership.acquire(source: "binance", instance: "host-a-1", ttl: 60_000))
            _ = try await leadership.acquire(source: "kraken", instance: "host-b-2", ttl: 1_000, now: 0)

            let status = try await PriceAlertBinary.run(["store", "status", "--store", url])
            #expect(status.status == 0, "\(status.stderr)")
            let lines = status.stdout.split(separator: "\n").map(String.init)
            let binance = try #require(lines.first { $0.hasPrefix("source \"binance\"") }, "\(status.stdout)")
            #expect(binance.hasPrefix("source \"binance\" leader \"host-a-1\" epoch 1 since "))
            #expect(binance.contains("lease until \(Timestamp.format(lease.until)) (in "))
            #expect(binance.hasSuffix("; standbys: \"host-b-2\""))
            let kraken = try #require(lines.first { $0.hasPrefix("source \"kraken\"") })
            #expect(kraken.hasPrefix("source \"kraken\" no leader (epoch 1 of \"host-b-2\" ended "))
            #expect(kraken.hasSuffix("; standbys: \"host-a-1\", \"host-b-2\""))
            #expect(lines.contains { $0.hasPrefix("instance \"host-a-1\" host \"host-a\" pid 1 started ") })
            #expect(lines.contains { $0.hasSuffix("follows \"binance\", \"kraken\"") })

            // host-a shuts down cleanly: binance has no leader until a standby asks.
            try await leadership.release(lease)
            try await leadership.forget(instance: "host-a-1")
            let after = try await PriceAlertBinary.run(["store", "status", "--store", url])
            #expect(after.stdout.contains("source \"binance\" no leader (epoch 1 of \"host-a-1\" ended "))
            #expect(!after.stdout.contains("instance \"host-a-1\""))
            #expect(!(status.stdout + status.stderr + after.stdout).contains(server.password))
            await store.close()
        }
    }
}

import AlertOutbox
import AlertTestSupport
import Testing

@testable import AlertPostgres

/// An attempt's outcome recorded by a deliverer whose claim ran out (it was paused past the
/// claim's lease, and another deliverer claimed the row meanwhile), against a real server.
@Suite struct PostgresClaimOutcomeTests {
    /// `a` claims the row, is held up past its lease, and `b` claims it and sends it. `a` then
    /// records a retry (its attempt timed out while it was stopped): `b`'s claim stays, so the
    /// row is not claimed a third time while `b`'s attempt is in flight.
    @Test func aRetryRecordedAfterTheClaimRanOutLeavesTheNewClaim() async throws {
        try await PostgresServer.with { server in
            let (a, b) = (try await PostgresStoreTests.open(server), try await PostgresStoreTests.open(server))
            try await a.outbox.enqueue(.event(PostgresStoreTests.alert("r")), sinks: ["hook"], now: 0)
            let first = try await a.outbox.claim(sink: "hook", owner: a.outbox.owner, now: 10, lease: 1_000, limit: 1)
            let second = try await b.outbox.claim(
                sink: "hook", owner: b.outbox.owner, now: 2_000, lease: 1_000, limit: 1)
            #expect(!first.isEmpty && second.map(\.id) == first.map(\.id))
            try await a.outbox.record(first.map(\.id), .retry(at: 2_001, reason: "timed out"))
            #expect(try await server.query("SELECT COALESCE(locked_by, '-') FROM outbox") == "\(b.outbox.owner)\n")
            #expect(
                try await a.outbox.claim(sink: "hook", owner: a.outbox.owner, now: 2_001, lease: 1_000, limit: 1)
                    .isEmpty)
            // b's own outcome still counts: its retry hands the row back.
            try await b.outbox.record(second.map(\.id), .retry(at: 2_002, reason: "HTTP 500"))
            #expect(
                try await a.outbox.claim(sink: "hook", owner: a.outbox.owner, now: 2_002, lease: 1_000, limit: 1)
                    .map(\.id) == first.map(\.id))
            await a.close()
            await b.close()
        }
    }
}

import AlertOutbox
import AlertTestSupport
import Testing

@testable import AlertPostgres

/// An attempt's outcome recorded by a deliverer whose claim ran out (it was paused past the
/// claim's lease, and another deliverer claimed the row meanwhile), against a real server.
@Suite struct PostgresClaimOutcomeTests {
    /// Rows for `rules` on sink `hook`; `a` claims the first at 10 for 1 s, is held up past that
    /// lease, and `b` claims the same row at 2 000. `body` gets both stores and the claimed ids.
    private static func takenOver(
        rules: [String] = ["r"],
        _ body: @escaping @Sendable (PostgresServer, PostgresStore, PostgresStore, [Int64]) async throws -> Void
    ) async throws {
        try await PostgresServer.with { server in
            let (a, b) = (try await PostgresStoreTests.open(server), try await PostgresStoreTests.open(server))
            for rule in rules {
                try await a.outbox.enqueue(.event(PostgresStoreTests.alert(rule)), sinks: ["hook"], now: 0)
            }
            let first = try await a.outbox.claim(sink: "hook", owner: a.outbox.owner, now: 10, lease: 1_000, limit: 1)
            let second = try await b.outbox.claim(
                sink: "hook", owner: b.outbox.owner, now: 2_000, lease: 1_000, limit: 1)
            #expect(!first.isEmpty && second.map(\.id) == first.map(\.id))
            try await body(server, a, b, first.map(\.id))
            await a.close()
            await b.close()
        }
    }

    /// `a` records a retry (its attempt timed out while it was stopped): `b`'s claim stays, so
    /// the row is not claimed a third time while `b`'s attempt is in flight.
    @Test func aRetryRecordedAfterTheClaimRanOutLeavesTheNewClaim() async throws {
        try await Self.takenOver { server, a, b, ids in
            try await a.outbox.record(ids, .retry(at: 2_001, reason: "timed out"))
            #expect(try await server.query("SELECT COALESCE(locked_by, '-') FROM outbox") == "\(b.outbox.owner)\n")
            #expect(
                try await a.outbox.claim(sink: "hook", owner: a.outbox.owner, now: 2_001, lease: 1_000, limit: 1)
                    .isEmpty)
            // b's own outcome still counts: its retry hands the row back.
            try await b.outbox.record(ids, .retry(at: 2_002, reason: "HTTP 500"))
            #expect(
                try await a.outbox.claim(sink: "hook", owner: a.outbox.owner, now: 2_002, lease: 1_000, limit: 1)
                    .map(\.id) == ids)
        }
    }

    /// `a` records that the row is dead (its attempt failed for good): the row stays `b`'s,
    /// with no dead letter and no fallback row, so it is never both sent by `b` and in the dead
    /// letters. `b`'s outcome decides.
    @Test func aDeadRecordedAfterTheClaimRanOutLeavesTheNewClaim() async throws {
        try await Self.takenOver { server, a, b, ids in
            let moved = try await a.outbox.record(
                ids, .dead(reason: "HTTP 400", lastError: "HTTP 400", at: 2_001, fallback: "log"))
            #expect(moved.isEmpty)
            #expect(try await a.outbox.dead().isEmpty)
            // The delivery stage's record says so: no dead letter made (its worker counts none).
            let recorded = await withCheckedContinuation { continuation in
                a.outbox.record(
                    ids, .dead(reason: "HTTP 400", lastError: "HTTP 400", at: 2_002, fallback: nil),
                    committed: { continuation.resume(returning: $0) }, failed: { _ in })
            }
            #expect(recorded == RecordedOutcome(moved: [], deadLetters: 0))
            #expect(try await server.query("SELECT sink || ' ' || locked_by FROM outbox") == "hook \(b.outbox.owner)\n")
            try await b.outbox.record(ids, .delivered)
            #expect(try await a.outbox.pending().isEmpty)
            #expect(try await a.outbox.dead().isEmpty)
        }
    }

    /// A delivery is a fact whoever records it: `a`, whose send went through, removes the row
    /// that `b` has claimed since, and `b`'s later failure then finds no row to retry or
    /// dead-letter. A dead outcome for a row whose lapsed claim nobody took over is recorded.
    @Test func aDeliveryRecordedAfterTheClaimRanOutStillCounts() async throws {
        try await Self.takenOver(rules: ["r", "s"]) { _, a, b, ids in
            try await a.outbox.record(ids, .delivered)
            try await b.outbox.record(ids, .dead(reason: "HTTP 400", lastError: "HTTP 400", at: 2_001))
            #expect(try await a.outbox.dead().isEmpty)
            let other = try await a.outbox.pending()
            #expect(other.count == 1 && other.map(\.id) != ids)
            // Claimed by `a`, lapsed, taken by nobody: `a`'s outcome is recorded.
            let late = try await a.outbox.claim(sink: "hook", owner: a.outbox.owner, now: 3_000, lease: 10, limit: 1)
            #expect(late.map(\.id) == other.map(\.id))
            let recorded = await withCheckedContinuation { continuation in
                a.outbox.record(
                    late.map(\.id), .dead(reason: "HTTP 400", lastError: "HTTP 400", at: 4_000, fallback: nil),
                    committed: { continuation.resume(returning: $0) }, failed: { _ in })
            }
            #expect(recorded.deadLetters == 1)
            #expect(try await a.outbox.dead().map(\.delivery.id) == other.map(\.delivery.id))
            #expect(try await a.outbox.pending().isEmpty)
        }
    }
}

import AlertModel
import AlertPolicy
import Logging
import PostgresNIO

/// A sink's rate held across every instance that delivers it (Docs/postgres.md#a-sinks-rate-across-instances):
/// the sliding window of `AlertPolicy.RateLimit`, kept in one row per sink (`sink_rates`) and
/// changed only under that row's lock, so two deliverers together start no more than `count`
/// attempts in any `per`.
///
/// An attempt holds its place in the window until it is settled, as in one process. An
/// attempt whose deliverer died is never settled: each one carries a lease, and once the lease
/// has run out the attempt counts as settled at its end, so a dead deliverer holds the window
/// no longer than its lease.
///
/// Times are epoch ms of the database server's clock unless the caller gives `now`.
public final class PostgresSinkRates: Sendable {
    let queue: PostgresQueue

    init(_ queue: PostgresQueue) {
        self.queue = queue
    }

    /// Whether an attempt may start now.
    public enum Decision: Sendable, Equatable {
        /// It started at this time, in flight until settled or until its lease ends.
        case start(Int64)
        /// Not before this time; `.max` while an attempt in flight decides it.
        case wait(until: Int64)
    }

    /// Starts an attempt on `sink` at `now` when `rate` allows it, in flight for at most
    /// `lease` ms; else says when to ask again.
    public func begin(sink: String, rate: RateSpec, lease: Int64, now: Int64? = nil) async throws -> Decision {
        try await beginTimed(sink: sink, rate: rate, lease: lease, now: now).decision
    }

    /// `begin`, with the window's clock when it decided (to turn `wait(until:)` into a delay).
    func beginTimed(
        sink: String, rate: RateSpec, lease: Int64, now: Int64? = nil
    ) async throws -> (decision: Decision, clock: Int64) {
        try await change(sink: sink, rate: rate, now: now) { limit, until, now in
            let next = limit.nextStart(now: now)
            guard next == now else { return .wait(until: next) }
            limit.begin(now)
            until.append(now + lease)
            return .start(now)
        }
    }

    /// Settles the attempt that `begin` started at `started`: it counts from `now` on.
    public func settle(sink: String, rate: RateSpec, started: Int64, now: Int64? = nil) async throws {
        _ = try await change(sink: sink, rate: rate, now: now) { limit, until, now in
            if let index = limit.inFlight.firstIndex(of: started) { until.remove(at: index) }
            limit.settle(started: started, now: now)
            return .start(started)
        }
    }

    /// Takes back the attempt that `begin` started at `started` and that was never made: it
    /// leaves the window without counting.
    public func cancel(sink: String, rate: RateSpec, started: Int64) async throws {
        _ = try await change(sink: sink, rate: rate, now: nil) { limit, until, _ in
            if let index = limit.inFlight.firstIndex(of: started) { until.remove(at: index) }
            limit.cancel(started: started)
            return .start(started)
        }
    }

    /// Runs `body` on `sink`'s window in one transaction under its row lock, after settling
    /// the attempts whose lease has run out, and writes the window back. `until` holds the
    /// lease end of each of the window's attempts in flight, in their order.
    private func change(
        sink: String, rate: RateSpec, now: Int64?,
        _ body: @escaping @Sendable (inout RateLimit, inout [Int64], Int64) -> Decision
    ) async throws -> (decision: Decision, clock: Int64) {
        let logger = queue.logger
        return try await queue.transaction { connection in
            try await connection.query(
                "INSERT INTO sink_rates (sink) VALUES (\(sink)) ON CONFLICT (sink) DO NOTHING", logger: logger)
            let rows = try await connection.query(
                """
                SELECT COALESCE(\(now)::BIGINT, \(unescaped: PostgresLeadership.serverClock)), starts, in_flight,
                  in_flight_until
                FROM sink_rates WHERE sink = \(sink) FOR UPDATE
                """, logger: logger)
            var read: (Int64, [Int64], [Int64], [Int64])?
            for try await row in rows.decode((Int64, [Int64], [Int64], [Int64]).self) { read = row }
            guard let (clock, starts, inFlight, leases) = read else { throw MissingRow(sink: sink) }
            var limit = RateLimit(rate, starts: starts, inFlight: inFlight)
            var until: [Int64] = []
            for (started, end) in zip(inFlight, leases) {
                if end <= clock {
                    limit.settle(started: started, now: end)
                } else {
                    until.append(end)
                }
            }
            let decision = body(&limit, &until, clock)
            try await connection.query(
                """
                UPDATE sink_rates SET starts = \(limit.starts), in_flight = \(limit.inFlight), in_flight_until = \(until)
                WHERE sink = \(sink)
                """, logger: logger)
            return (decision, clock)
        }
    }

    struct MissingRow: Error, CustomStringConvertible {
        var sink: String
        var description: String { "sink_rates has no row for sink \(sink)" }
    }

    /// Part of schema step 2 (`PostgresMigrations.all`).
    static let schema = [
        """
        CREATE TABLE sink_rates (
          sink TEXT PRIMARY KEY, starts BIGINT[] NOT NULL DEFAULT '{}', in_flight BIGINT[] NOT NULL DEFAULT '{}',
          in_flight_until BIGINT[] NOT NULL DEFAULT '{}')
        """
    ]
}

extension PostgresStore {
    /// Sinks' rates shared by every instance, on this store's connection.
    public var sinkRates: PostgresSinkRates { PostgresSinkRates(queue) }
}

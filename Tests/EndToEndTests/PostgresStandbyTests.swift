import AlertTestSupport
import Foundation
import Testing

/// Two `run`s sharing one PostgreSQL store (Docs/postgres.md#several-instances): the built
/// binary twice, a scripted Binance on 127.0.0.1 streaming the same BTC/USDT ticks (timed by the
/// exchange) to both, a webhook receiver and a real PostgreSQL. One instance leads the source;
/// the other evaluates as a hot standby, sends and saves nothing, and takes over.
@Suite("end to end: a leader and a standby on one PostgreSQL store", .programs)
struct PostgresStandbyTests {
    /// The instance id `daemon` logged at start (`instance "ID" follows …`).
    func instanceID(_ daemon: ObservedProcess) throws -> String {
        let line = try #require(daemon.stderr.split(separator: "\n").first { $0.contains("] instance \"") })
        let start = try #require(line.range(of: "instance \"")).upperBound
        return String(line[start...].prefix { $0 != "\"" })
    }

    /// `/metrics` and `/healthz` of `daemon` once `pricealert_source_leader{source="binance"}`
    /// reads `leader`.
    func roles(of daemon: ObservedProcess, leader: Int) async throws -> (metrics: String, health: String) {
        let base = try await daemon.statusBase()
        let tests = LiveCommandTests()
        while true {
            let metrics = try await tests.get("\(base)/metrics").body
            if LiveCommandTests.sample(metrics, #"pricealert_source_leader{source="binance"}"#) == Double(leader) {
                return (metrics, try await tests.get("\(base)/healthz").body)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The leader enters each event once and either instance delivers it (both claim from the
    /// outbox): each arrives once. `/metrics`, `/healthz` and `store status` show who leads and
    /// who stands by. The leader stopped gracefully hands over: the standby takes the source in
    /// the next epoch, enters nothing the leader entered (the ledger skips it by id) and enters
    /// what follows.
    @Test func eachEventArrivesOnceTheRolesShowAndAGracefulStopHandsOver() async throws {
        try await PostgresRunSetup.with { setup in
            let (leader, standby, feeds) = try await setup.startPair()

            setup.send(0, to: feeds)
            try await setup.hook.arrivals.wait(for: 5)
            setup.send(1, to: feeds)
            try await setup.hook.arrivals.wait(for: 10)
            let shown = try await roles(of: leader, leader: 1)
            #expect(LiveCommandTests.sample(shown.metrics, #"pricealert_source_epoch{source="binance"}"#) == 1)
            #expect(shown.health.contains("role binance: leader (epoch 1)"), "\(shown.health)")
            let standing = try await roles(of: standby, leader: 0)
            #expect(standing.health.contains("role binance: standby"), "\(standing.health)")
            // `store status` names both running instances and their roles.
            let (leaderID, standbyID) = (try instanceID(leader), try instanceID(standby))
            let status = try await PriceAlertBinary.run(["store", "status", "--store", setup.server.url()])
            let line = try #require(status.stdout.split(separator: "\n").first { $0.hasPrefix("source \"binance\"") })
            #expect(line.hasPrefix("source \"binance\" leader \"\(leaderID)\" epoch 1 since "), "\(status.stdout)")
            #expect(line.hasSuffix("; standbys: \"\(standbyID)\""), "\(status.stdout)")
            #expect(status.stdout.contains("instance \"\(standbyID)\" host "), "\(status.stdout)")

            #expect(try await leader.stop(signal: SIGTERM) == 0, "\(leader.stderr)")
            _ = try await standby.waitForStderrLine(containing: "source binance: taking over in epoch 2", timeout: 60)
            let taken = try await roles(of: standby, leader: 1)
            #expect(LiveCommandTests.sample(taken.metrics, #"pricealert_source_epoch{source="binance"}"#) == 2)
            setup.send(2, to: feeds)
            try await setup.hook.arrivals.wait(for: 15)
            #expect(try await standby.stop(signal: SIGTERM) == 0, "\(standby.stderr)")

            let received = setup.hook.received.withLock { $0 }
            #expect(received.sorted() == setup.expected.joined().sorted(), "\(leader.stderr)\n\(standby.stderr)")
            #expect(try await setup.ledger() == "1|10\n2|5\n")
            #expect(try await setup.server.query("SELECT COUNT(*) FROM outbox") == "0\n")
            #expect(!(leader.stderr + standby.stderr).contains(setup.server.password))
        }
    }

    /// A leader paused (SIGSTOP) past its lease loses the source to the standby, which enters
    /// what fired meanwhile; continued (SIGCONT), the old leader writes nothing (the fence) and
    /// follows as a standby. Every event is delivered once.
    @Test func aPausedLeaderWakesAsAStandbyAndWritesNothing() async throws {
        try await PostgresRunSetup.with { setup in
            let (leader, standby, feeds) = try await setup.startPair()
            setup.send(0, to: feeds)
            try await setup.hook.arrivals.wait(for: 5)
            // A delivery in flight when its sender stops is sent again by the next leader (at
            // least once): paused once every outcome is recorded, nothing is sent twice.
            try await setup.outboxEmptied()

            #expect(kill(leader.pid, SIGSTOP) == 0)
            setup.send(1, to: feeds)
            _ = try await standby.waitForStderrLine(containing: "source binance: taking over in epoch 2", timeout: 60)
            try await setup.hook.arrivals.wait(for: 10)
            #expect(kill(leader.pid, SIGCONT) == 0)
            _ = try await leader.waitForStderrLine(containing: "source binance: standby", timeout: 60)
            setup.send(2, to: feeds)
            try await setup.hook.arrivals.wait(for: 15)
            #expect(try await standby.stop(signal: SIGTERM) == 0, "\(standby.stderr)")
            #expect(try await leader.stop(signal: SIGTERM) == 0, "\(leader.stderr)")

            let received = setup.hook.received.withLock { $0 }
            #expect(received.sorted() == setup.expected.joined().sorted(), "\(leader.stderr)\n\(standby.stderr)")
            // The old leader entered the first batch only; what it evaluated after it woke was
            // refused by the fence, and the new leader entered the rest.
            #expect(try await setup.ledger() == "1|5\n2|10\n", "\(leader.stderr)")
        }
    }
}

import AlertTestSupport
import Foundation
import Testing

/// `run` with a PostgreSQL store (`PRICEALERT_STORE`): the built binary, a scripted Binance on
/// 127.0.0.1 streaming BTC/USDT ticks, a webhook receiver, and a real PostgreSQL that is
/// restarted under the daemon.
@Suite("end to end: run with a PostgreSQL store", .programs)
struct PostgresDaemonTests {
    /// Five crossings before the restart, five while the database is down, five after: every
    /// alert reaches the receiver once, by its id, and the run ends cleanly.
    @Test func aDatabaseRestartUnderARunLosesAndDoublesNoAlert() async throws {
        try await PostgresRunSetup.with { setup in
            let daemon = try setup.start()
            let feed = try await setup.exchange.connection(1)
            try await feed.waitForTexts(1)
            setup.send(0, to: [feed])
            try await setup.hook.arrivals.wait(for: 5)
            try await setup.server.restart {
                setup.send(1, to: [feed])
                _ = try await daemon.waitForStderrLine(containing: "waiting for the database", timeout: 120)
            }
            _ = try await daemon.waitForStderrLine(containing: "connected again", timeout: 120)
            setup.send(2, to: [feed])
            try await setup.hook.arrivals.wait(for: 15)
            #expect(try await daemon.stop(signal: SIGTERM) == 0, "\(daemon.stderr)")
            let received = setup.hook.received.withLock { $0 }
            #expect(received.sorted() == setup.expected.joined().sorted(), "\(daemon.stderr)")
            #expect(!(daemon.stdout + daemon.stderr).contains(setup.server.password))
            // Nothing left behind: the store's outbox is empty, and the state was saved there.
            #expect(try await setup.server.query("SELECT COUNT(*) FROM outbox") == "0\n")
            #expect(try await setup.server.query("SELECT COUNT(*) FROM engine_symbols") == "1\n")
        }
    }
}

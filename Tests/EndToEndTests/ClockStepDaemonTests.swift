import AlertModel
import AlertTestSupport
import Foundation
import GRDB
import Hummingbird
import Testing

/// `run` when the system clock steps back by an hour while it runs (issue #23): the built binary
/// against `HostileExchange` on 127.0.0.1, its time of day moved by Debian's libfaketime
/// (`faketime`, installed by scripts/bootstrap) through LD_PRELOAD. Only the time of day moves
/// (`FAKETIME_DONT_FAKE_MONOTONIC=1`); the offset is read from a file on every call
/// (`FAKETIME_TIMESTAMP_FILE`, `FAKETIME_NO_CACHE=1`), which the test rewrites from `+0` to `-1h`.
/// BTSE's index prices carry no time: they are timed by the local clock when they arrive, so the
/// ticks after the step are an hour earlier than those before (Docs/rules.md#ticks-from-the-future).
@Suite("end to end: the daemon across a step back of the system clock", .programs)
struct ClockStepDaemonTests {
    static let libfaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

    /// A webhook receiver that counts the requests it answers (204).
    final class Hook: Sendable {
        let arrivals = EventCounter()

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("hook") { request, _ -> Response in
                _ = try await request.body.collect(upTo: 1 << 20)
                self.arrivals.record()
                return Response(status: .noContent)
            }
            return router
        }
    }

    /// The `time` of the alerts of `rule` on standard output, in the order written.
    static func alertTimes(_ stdout: String, rule: String) -> [Int64] {
        stdout.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["rule"] as? String == rule, let time = object["time"] as? String
            else { return nil }
            return Timestamp.parse(Array(time.utf8))
        }
    }

    /// BTC's `saved_at` in the state folder's database (epoch ms by the daemon's clock), or nil
    /// before its first save. Read beside the running daemon (SQLite's WAL lets a reader in).
    static func savedAt(in dir: URL) async throws -> Int64? {
        let path = dir.appendingPathComponent("st/pricealert.sqlite").path
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let database = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? database.close() }
        return try await database.read { db in
            // The table exists once the daemon has made its schema.
            guard try db.tableExists("symbol_state") else { return nil }
            return try Int64.fetchOne(db, sql: "SELECT saved_at FROM symbol_state WHERE symbol = 'BTC'")
        }
    }

    /// Polls BTC's `saved_at` every 100 ms until `condition` holds of it (the daemon's saves are
    /// the event waited for), for up to `patience`: generous, as the test may start beside every
    /// other test on two busy cores.
    static func waitForSave(in dir: URL, _ what: String, _ condition: (Int64) -> Bool) async throws -> Int64 {
        var last: Int64?
        let deadline = ContinuousClock.now + .seconds(patience)
        while ContinuousClock.now < deadline {
            last = try await savedAt(in: dir)
            if let last, condition(last) { return last }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NoSave(what: what, savedAt: last)
    }

    /// How long each step of the test waits for what it expects, in seconds.
    static let patience = 300

    struct NoSave: Error, CustomStringConvertible {
        var what: String
        var savedAt: Int64?
        var description: String { "no save \(what): BTC's saved_at is \(savedAt.map(String.init) ?? "absent")" }
    }

    /// After the step: the daemon warns with its size (a), BTC's moves keep firing to standard
    /// output (b), the webhook limited to one request a second keeps receiving (c), and state is
    /// still saved every second, stamped by the new clock (d).
    @Test func aStepBackOfAnHourWarnsAndKeepsAlertsDeliveriesAndSavesGoing() async throws {
        #expect(
            FileManager.default.fileExists(atPath: Self.libfaketime),
            "\(Self.libfaketime) is missing: install Debian's faketime (scripts/bootstrap)")
        guard FileManager.default.fileExists(atPath: Self.libfaketime) else { return }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-clockstep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let offset = dir.appendingPathComponent("faketime.rc")
        try "+0\n".write(to: offset, atomically: true, encoding: .utf8)
        // FAKETIME_SHARED names shared memory that does not exist: without it, libfaketime makes
        // some for child processes at load and sets FAKETIME_SHARED in the environment, and the
        // Swift binary then sees no arguments (libfaketime 0.9.10, Swift 6.3: Swift finds the
        // arguments beside the environment the process started with). The daemon's children need
        // no fake time.
        let environment = [
            "LD_PRELOAD": Self.libfaketime, "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            "FAKETIME_TIMESTAMP_FILE": offset.path, "FAKETIME_NO_CACHE": "1",
            "FAKETIME_SHARED": "/pricealert-none-sem /pricealert-none-shm"
        ]

        let hook = Hook()
        let exchange = HostileExchange(websocket: .accept(.prices(every: .milliseconds(200))))
        let exchangePort = try await exchange.start()
        do {
            try await LoopbackServer.with(hook.router()) { hookPort in
                // Every price move of BTC fires (five a second); the webhook takes one a second.
                let rules = """
                    {"version": 2,
                     "sinks": {"out": {"type": "stdout", "format": "json"},
                               "hook": {"type": "webhook", "url": "http://127.0.0.1:\(hookPort)/hook",
                                        "rate": {"count": 1, "per": "1s"}}},
                     "defaults": {"notify": ["out", "hook"]},
                     "rules": [{"id": "btc-moves", "symbol": "BTC", "when": {"move": {"percent": 0.001}}}]}
                    """
                try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                let running = try PriceAlertBinary.start(
                    [
                        "run", "--rules", "rules.json", "--source", "btse",
                        "--endpoint", "http://127.0.0.1:\(exchangePort)",
                        "--state", "st", "--save-every", "1s"
                    ],
                    in: dir, environment: environment)
                do {
                    // Before the step: alerts, deliveries and a save.
                    try await running.occurrences(
                        .stdout, of: #""btc-moves""#, atLeast: 3, timeout: Double(Self.patience))
                    try await hook.arrivals.wait(for: 2, timeout: .seconds(Self.patience))
                    let savedBefore = try await Self.waitForSave(in: dir, "before the step") { _ in true }
                    let timesBefore = Self.alertTimes(running.stdout, rule: "btc-moves")

                    try "-1h\n".write(to: offset, atomically: true, encoding: .utf8)

                    // (a) The step is noticed and its size told.
                    let warning = try await running.waitForStderrLine(
                        containing: "the system clock stepped back by ", timeout: Double(Self.patience))
                    let size = warning.components(separatedBy: "stepped back by ").last?.prefix { $0 != " " } ?? ""
                    let step = try #require(DurationText.parse(String(size)), "\(warning)")
                    #expect(abs(step - 3_600_000) < 60_000, "\(warning)")
                    let firedAtStep = running.stdout.components(separatedBy: #""btc-moves""#).count - 1
                    let deliveredAtStep = hook.arrivals.count

                    // (b) Ticks timed by the new clock still fire: not all dropped as out of order.
                    // The newest alerts are timed about an hour before the first ones.
                    try await running.occurrences(
                        .stdout, of: #""btc-moves""#, atLeast: firedAtStep + 5, timeout: Double(Self.patience))
                    let timesAfter = Self.alertTimes(running.stdout, rule: "btc-moves")
                    let first = try #require(timesBefore.first), newest = try #require(timesAfter.last)
                    #expect(first - newest > 30 * 60_000, "first alert at \(first), newest at \(newest)")

                    // (c) The rate-limited webhook keeps receiving.
                    try await hook.arrivals.wait(for: deliveredAtStep + 3, timeout: .seconds(Self.patience))

                    // (d) Saves go on, stamped by the new clock (about an hour before the first).
                    _ = try await Self.waitForSave(in: dir, "after the step") { $0 < savedBefore - 30 * 60_000 }

                    #expect(
                        try await running.stop(signal: SIGTERM, timeout: Double(Self.patience)) == 0,
                        "\(running.stderr)")
                } catch {
                    if running.process.isRunning { _ = try? await running.stop(signal: SIGKILL) }
                    Issue.record("stderr: \(running.stderr.suffix(3000))")
                    throw error
                }
            }
        } catch {
            await exchange.stop()
            throw error
        }
        await exchange.stop()
    }
}

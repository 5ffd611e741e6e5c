import AlertModel
import AlertTestSupport
import Foundation
import SeededRandom
import Synchronization
import Testing

/// Several `run` instances of the built binary on one PostgreSQL store (issue #27, item 6):
/// a scripted Binance streams tickers stamped with the exchange's time to every instance, a
/// signed webhook receiver records each (id, sink) that arrives, and the instances are killed,
/// stopped and cut from their database under that load. Every event the v3 reference gives for
/// the ticks sent must arrive, none that it does not give, and none twice unless its sender
/// was disrupted between the two arrivals (`DeliveryCheck`).
///
/// Every wait is on an event (a line an instance writes, a tick sent, a delivery received),
/// with generous timeouts.
@Suite("end to end: several run instances on one PostgreSQL store", .programs)
struct PostgresFailoverTests {
    /// The line an instance writes when it becomes the leader of the source `binance`.
    static let leaderLine = "source binance: leader in epoch"
    /// The line an instance writes when it follows the source as a standby (at start, or once
    /// it finds it lost the lease).
    static let standbyLine = "source binance: standby"

    /// Everything a case runs against, and the instants at which it disrupted something.
    struct Rig: Sendable {
        let dir: URL
        let server: PostgresServer
        let exchange: ScriptedExchange
        let broadcast: TickBroadcast
        let receiver: SignedWebhookReceiver
        let slots: DaemonSlots
        let rules: String
        let disruptions = Disruptions()

        /// The instant a disruption starts (just before the signal or the restart), kept for
        /// `DeliveryCheck`.
        final class Disruptions: Sendable {
            private let instants = Mutex<[ContinuousClock.Instant]>([])
            func now() { instants.withLock { $0.append(.now) } }
            var all: [ContinuousClock.Instant] { instants.withLock { $0 } }
        }

        /// Starts an instance in `slot`; returns the number its exchange connection will have
        /// (the instances connect one at a time in these tests).
        func start(_ slot: Int) throws -> Int {
            let connection = exchange.connectionCount + 1
            try slots.start(slot)
            return connection
        }

        /// Waits until the instance in `slot` says it leads the source (its `occurrence`-th
        /// such line): the time it took from `since`.
        @discardableResult
        func waitForLeader(
            _ slot: Int, occurrence: Int = 1, since: ContinuousClock.Instant = .now, timeout: TimeInterval = 90
        ) async throws -> Duration {
            let process = try #require(slots.process(slot))
            try await process.occurrences(
                .stderr, of: PostgresFailoverTests.leaderLine, atLeast: occurrence, timeout: timeout)
            return .now - since
        }

        /// Waits until every (id, sink) the reference gives for the ticks sent so far arrived.
        func waitForDeliveries(_ expected: Expected, timeout: Duration = .seconds(120)) async throws {
            try await receiver.waitForAll(Set(try expected.update(broadcast.sent)), timeout: timeout)
        }

        /// Stops the stream, waits for everything the reference gives to arrive, stops every
        /// instance (SIGTERM: each must exit 0) and compares the arrivals with the reference.
        func finish(_ expected: Expected) async throws {
            let ticks = await broadcast.stop()
            let pairs = try expected.update(ticks)
            try await receiver.waitForAll(Set(pairs), timeout: .seconds(120))
            let statuses = try await slots.stopAll()
            #expect(statuses.values.allSatisfy { $0 == 0 }, "\(statuses)\n\(slots.stderr)")
            let check = DeliveryCheck(expected: pairs, arrivals: receiver.arrivals, disruptions: disruptions.all)
            check.expectExact("\(ticks.count) ticks, \(pairs.count) expected deliveries\n\(slots.stderr)")
            #expect(receiver.unsigned == 0)
            #expect(!slots.stderr.contains(server.password))
            // Nothing left to deliver in the store.
            #expect(try await server.query("SELECT COUNT(*) FROM outbox") == "0\n")
        }

        static func with(_ body: @Sendable (Rig) async throws -> Void) async throws {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "pricealert-ha-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let secret = "ha-signing-\(UUID().uuidString)"
            let secretFile = dir.appendingPathComponent("signing.secret")
            try secret.write(to: secretFile, atomically: true, encoding: .utf8)
            let exchange = try ExchangeSourceCommandTests.exchange(ExchangeSourceCommandTests.cases[0].rest)
            let exchangePort = try await exchange.start()
            let broadcast = TickBroadcast(exchange: exchange)
            let receiver = SignedWebhookReceiver(secret: secret)
            do {
                try await run(
                    dir: dir, secretFile: secretFile, exchange: exchange, exchangePort: exchangePort,
                    broadcast: broadcast, receiver: receiver, body)
            } catch {
                await exchange.stop()
                throw error
            }
            await exchange.stop()
        }

        private static func run(
            dir: URL, secretFile: URL, exchange: ScriptedExchange, exchangePort: Int, broadcast: TickBroadcast,
            receiver: SignedWebhookReceiver, _ body: @Sendable (Rig) async throws -> Void
        ) async throws {
            try await PostgresServer.with { server in
                try await receiver.with { hookPort in
                    let rules = FailoverStream.rules(
                        exchangePort: exchangePort, hookPort: hookPort, secretFile: secretFile.path)
                    try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                    let slots = DaemonSlots(
                        arguments: ["run", "--rules", "rules.json", "--save-every", "1s"], directory: dir,
                        environment: ["PRICEALERT_STORE": server.url()])
                    let rig = Rig(
                        dir: dir, server: server, exchange: exchange, broadcast: broadcast, receiver: receiver,
                        slots: slots, rules: rules)
                    broadcast.start()
                    do {
                        try await body(rig)
                    } catch {
                        _ = await broadcast.stop()
                        await slots.killAll()
                        throw error
                    }
                    _ = await broadcast.stop()
                    await slots.killAll()
                }
            }
        }
    }

    /// The reference's (id, sink) pairs for the ticks sent, computed as they are sent.
    final class Expected {
        let reference: ReferenceEngineV2
        var processed = 0
        var pairs: [SignedWebhookReceiver.Pair] = []

        init(rules: String) throws {
            reference = try ReferenceEngineV2(files: [rules])
        }

        func update(_ ticks: [Tick]) throws -> [SignedWebhookReceiver.Pair] {
            for tick in ticks.dropFirst(processed) {
                for event in reference.process(tick) {
                    pairs += ["a", "b"].map { SignedWebhookReceiver.Pair(id: event.id, sink: $0) }
                }
            }
            processed = ticks.count
            return pairs
        }
    }

    /// The leader in slot 0, a standby in slot 1 that follows the stream and whose leader
    /// delivered everything so far; returns the standby's connection.
    static func leaderAndStandby(_ rig: Rig, _ expected: Expected) async throws {
        let first = try rig.start(0)
        try await rig.waitForLeader(0)
        try await rig.broadcast.waitUntilFollowing(connection: first, ticks: 10)
        let second = try rig.start(1)
        try await rig.broadcast.waitUntilFollowing(connection: second, ticks: 10)
        try await rig.waitForDeliveries(expected)
    }

    /// (a) The leader killed with SIGKILL 20 times, at seeded random moments, while the stream
    /// goes on: each time the standby takes over, the killed instance is started again (once
    /// the standby leads: a fresh instance has not seen the ticks since the last save, so the
    /// standby that did must be the one to take over), follows the stream, and becomes the
    /// next standby. Every event arrives, none is doubled.
    @Test func twentyKillsOfTheLeaderLoseAndDoubleNothing() async throws {
        try await Rig.with { rig in
            let expected = try Expected(rules: rig.rules)
            try await Self.leaderAndStandby(rig, expected)
            var rng = SeededRandom(seed: 0x2827)
            var leader = 0
            var failovers: [Duration] = []
            for _ in 0..<20 {
                let standby = 1 - leader
                // A random moment: 0 to 40 ticks (0 to ~0.8 s) after the standby is known to follow.
                try await rig.broadcast.waitForMoreTicks(Int.random(in: 0...40, using: &rng))
                rig.disruptions.now()
                let killed = ContinuousClock.now
                try await rig.slots.stop(leader, signal: SIGKILL)
                failovers.append(try await rig.waitForLeader(standby, since: killed))
                let connection = try rig.start(leader)
                try await rig.broadcast.waitUntilFollowing(connection: connection, ticks: 10)
                try await rig.waitForDeliveries(expected)
                leader = standby
            }
            let sorted = failovers.sorted()
            print(
                "failover after SIGKILL: median \(sorted[sorted.count / 2]), max \(sorted.last!) over \(sorted.count)")
            #expect(sorted.last! < .seconds(30), "\(failovers)")
            try await rig.finish(expected)
        }
    }

    /// (b) The leader stopped with SIGSTOP under the stream: the standby takes over; the old
    /// leader, continued, finds it lost the source and writes nothing under its old epoch
    /// after the takeover (the fence).
    @Test func aLeaderStoppedAndContinuedWritesNothingAfterTheTakeover() async throws {
        try await Rig.with { rig in
            let expected = try Expected(rules: rig.rules)
            try await Self.leaderAndStandby(rig, expected)
            let old = try #require(rig.slots.process(0))
            let standbyLines = old.stderr.components(separatedBy: Self.standbyLine).count - 1
            rig.disruptions.now()
            kill(old.pid, SIGSTOP)
            try await rig.waitForLeader(1)
            try await rig.broadcast.waitForMoreTicks(50)
            try await rig.waitForDeliveries(expected)
            kill(old.pid, SIGCONT)
            try await old.occurrences(.stderr, of: Self.standbyLine, atLeast: standbyLines + 1, timeout: 90)
            try await rig.broadcast.waitForMoreTicks(50)
            try await rig.waitForDeliveries(expected)
            let late = try await rig.server.query(
                """
                SELECT COUNT(*) FROM outbox_ledger l JOIN leadership r ON r.source = l.source
                WHERE l.epoch < r.epoch AND l.enqueued_at >= r.acquired_at
                """)
            #expect(late == "0\n", "ledger entries of the old epoch after the takeover")
            try await rig.finish(expected)
        }
    }

    /// (c) The database restarted under the stream with two instances: both wait for it, the
    /// source is led again once it is back, and nothing is lost or doubled.
    @Test func aDatabaseRestartUnderTwoInstancesLosesNothing() async throws {
        try await Rig.with { rig in
            let expected = try Expected(rules: rig.rules)
            try await Self.leaderAndStandby(rig, expected)
            let instances = try [0, 1].map { try #require(rig.slots.process($0)) }
            rig.disruptions.now()
            try await rig.server.restart {
                for instance in instances {
                    _ = try await instance.line(.stderr, containing: "waiting for the database", timeout: 90)
                }
                try await rig.broadcast.waitForMoreTicks(100)
            }
            for instance in instances {
                _ = try await instance.line(.stderr, containing: "connected again", timeout: 90)
            }
            try await rig.broadcast.waitForMoreTicks(100)
            try await rig.waitForDeliveries(expected)
            try await rig.finish(expected)
        }
    }

    /// (d) A standby started late, after the leader delivered for a while: it restores the
    /// saved state, follows the stream, and when the leader is killed it takes over with
    /// nothing lost.
    @Test func aStandbyStartedLateTakesOverWithNothingLost() async throws {
        try await Rig.with { rig in
            let expected = try Expected(rules: rig.rules)
            let first = try rig.start(0)
            try await rig.waitForLeader(0)
            try await rig.broadcast.waitUntilFollowing(connection: first, ticks: 150)
            try await rig.waitForDeliveries(expected)
            let second = try rig.start(1)
            try await rig.broadcast.waitUntilFollowing(connection: second, ticks: 10)
            try await rig.waitForDeliveries(expected)
            try await rig.broadcast.waitForMoreTicks(17)
            rig.disruptions.now()
            try await rig.slots.stop(0, signal: SIGKILL)
            try await rig.waitForLeader(1)
            try await rig.broadcast.waitForMoreTicks(100)
            try await rig.finish(expected)
        }
    }
}

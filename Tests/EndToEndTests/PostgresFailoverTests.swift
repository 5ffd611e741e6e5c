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
    /// The store's clock in epoch ms, in SQL.
    static let storeClock = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"

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

        /// Each disruption's span, from just before the signal or the restart to when it was
        /// seen to be over (the source led again), and how many outbox rows were pending when
        /// it began (what may be sent again), kept for `DeliveryCheck`.
        final class Disruptions: Sendable {
            private let spans = Mutex<[DeliveryCheck.Disruption]>([])

            /// A disruption starts now; returns its number for `end`.
            func begin() -> Int {
                spans.withLock { spans in
                    spans.append(DeliveryCheck.Disruption(start: .now))
                    return spans.count - 1
                }
            }

            /// The outbox rows pending once the leader could write no more (it was killed or
            /// stopped, and no other leads yet).
            func pending(_ number: Int, _ rows: Int) { spans.withLock { $0[number].pending = rows } }

            func end(_ number: Int) { spans.withLock { $0[number].end = .now } }

            var all: [DeliveryCheck.Disruption] { spans.withLock { $0 } }
        }

        /// The outbox rows pending now.
        func pendingRows() async throws -> Int {
            try #require(Int(try await server.query("SELECT COUNT(*) FROM outbox").filter(\.isNumber)))
        }

        /// Starts an instance in `slot`; returns the number its exchange connection will have
        /// (the instances connect one at a time in these tests).
        func start(_ slot: Int) throws -> Int {
            let connection = exchange.connectionCount + 1
            try slots.start(slot)
            return connection
        }

        /// Waits until the instance in `slot` says it leads the source (once more than
        /// `before` times): the time it took from `since`.
        @discardableResult
        func waitForLeader(
            _ slot: Int, before: Int = 0, since: ContinuousClock.Instant = .now, timeout: TimeInterval = 90
        ) async throws -> Duration {
            let process = try #require(slots.process(slot))
            try await process.occurrences(
                .stderr, of: PostgresFailoverTests.leaderLine, atLeast: before + 1, timeout: timeout)
            return .now - since
        }

        /// Waits until one of `candidates` (slot and how many leader lines it had written) says
        /// it leads the source; returns that slot.
        func waitForLeader(among candidates: [(slot: Int, before: Int)], timeout: TimeInterval = 90) async throws -> Int
        {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for candidate in candidates {
                    group.addTask {
                        try await waitForLeader(candidate.slot, before: candidate.before, timeout: timeout)
                        return candidate.slot
                    }
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        }

        /// How many leader lines the instance in `slot` has written.
        func leaderLines(_ slot: Int) -> Int {
            (slots.process(slot)?.stderr.components(separatedBy: PostgresFailoverTests.leaderLine).count ?? 1) - 1
        }

        /// Waits until every (id, sink) the reference gives for the ticks sent so far arrived;
        /// when some never do, records which, and what the store knows of them.
        func waitForDeliveries(_ expected: Expected, timeout: Duration = .seconds(120)) async throws {
            let want = Set(try expected.update(broadcast.sent))
            do {
                try await receiver.waitForAll(want, timeout: timeout)
            } catch {
                let missing = want.subtracting(receiver.arrivals.map(\.pair)).sorted().prefix(20)
                let ids = missing.map { "'\($0.id)'" }.joined(separator: ", ")
                let ledger = try? await server.query(
                    "SELECT delivery_id || ' ' || sink || ' epoch ' || epoch FROM outbox_ledger WHERE delivery_id IN (\(ids))"
                )
                let rows = try? await server.query(
                    """
                    SELECT delivery_id || ' ' || sink || ' ' || COALESCE(locked_by, '-') || ' ' || attempts FROM outbox
                    WHERE delivery_id IN (\(ids))
                    """)
                Issue.record("missing: \(missing)\nin the ledger:\n\(ledger ?? "?")\nin the outbox:\n\(rows ?? "?")")
                throw error
            }
        }

        /// Stops the stream, waits for everything the reference gives to arrive, stops every
        /// instance (SIGTERM: each must exit 0) and compares the arrivals with the reference.
        /// With `feedAlerts`, the feeds went stale on purpose: their `@feed-stale` and
        /// `@feed-recovered` events (each instance's own, Docs/postgres.md) are left out of the
        /// comparison.
        func finish(_ expected: Expected, feedAlerts: Bool = false) async throws {
            let ticks = await broadcast.stop()
            let pairs = try expected.update(ticks)
            try await receiver.waitForAll(Set(pairs), timeout: .seconds(120))
            let statuses = try await slots.stopAll()
            #expect(statuses.values.allSatisfy { $0 == 0 }, "\(statuses)\n\(slots.stderr)")
            let arrivals = receiver.arrivals.filter { !feedAlerts || !$0.id.hasPrefix("@feed-") }
            let check = DeliveryCheck(expected: pairs, arrivals: arrivals, disruptions: disruptions.all)
            print(
                "\(ticks.count) ticks sent, \(pairs.count) deliveries expected, \(receiver.arrivals.count) arrived (\(check.repeats) repeats, at most \(check.pendingBound.map(String.init) ?? "?") pending at \(disruptions.all.count) disruptions)"
            )
            check.expectExact("\(ticks.count) ticks, \(pairs.count) expected deliveries\n\(slots.stderr)")
            #expect(receiver.unsigned == 0)
            #expect(!slots.stderr.contains(server.password))
            // Nothing left to deliver in the store but rows a killed instance had claimed (their
            // lease, 30 s, may outlast the run) and had already sent: each is one that arrived,
            // and is sent again once its lease ends (at least once).
            let left = try await server.query(
                "SELECT delivery_id || ' ' || sink FROM outbox WHERE locked_by IS NOT NULL")
            let unclaimed = try await server.query("SELECT COUNT(*) FROM outbox WHERE locked_by IS NULL")
            #expect(unclaimed == "0\n")
            let arrived = Set(receiver.arrivals.map { "\($0.id) \($0.sink)" })
            for row in left.split(separator: "\n") where !row.isEmpty {
                #expect(arrived.contains(String(row)), "a claimed row that never arrived: \(row)")
            }
        }

        /// The arrivals in short, for a failure's message: how many, how many distinct, and the
        /// pairs that arrived most often.
        var arrivalSummary: String {
            var counts: [SignedWebhookReceiver.Pair: Int] = [:]
            for arrival in receiver.arrivals { counts[arrival.pair, default: 0] += 1 }
            let most = counts.sorted { $0.value > $1.value }.prefix(5).map { "\($0.key) ×\($0.value)" }
            return
                "\(receiver.arrivals.count) arrivals, \(counts.count) distinct, \(broadcast.count) ticks sent; most: \(most)"
        }

        /// `arguments` are added to every instance's `run`.
        static func with(arguments: [String] = [], _ body: @Sendable (Rig) async throws -> Void) async throws {
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
                    broadcast: broadcast, receiver: receiver, arguments: arguments, body)
            } catch {
                await exchange.stop()
                throw error
            }
            await exchange.stop()
        }

        private static func run(
            dir: URL, secretFile: URL, exchange: ScriptedExchange, exchangePort: Int, broadcast: TickBroadcast,
            receiver: SignedWebhookReceiver, arguments: [String], _ body: @Sendable (Rig) async throws -> Void
        ) async throws {
            try await PostgresServer.with { server in
                try await receiver.with { hookPort in
                    let rules = FailoverStream.rules(
                        exchangePort: exchangePort, hookPort: hookPort, secretFile: secretFile.path)
                    try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                    let slots = DaemonSlots(
                        arguments: ["run", "--rules", "rules.json", "--save-every", "1s"] + arguments, directory: dir,
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
                        Issue.record("\(rig.arrivalSummary)\n\(slots.stderr)")
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
    /// goes on; the killed instance is started again so that two are always up. Before each
    /// kill the standby follows the stream and everything sent before it did has arrived.
    /// Every event arrives; a repeat needs a kill around it (at least once for a delivery in
    /// flight). The killed instance is started again once the standby leads: see the next test
    /// for a restart at once.
    @Test func twentyKillsOfTheLeaderLoseAndDoubleNothing() async throws {
        try await Self.kills(20, restartAtOnce: false)
    }

    /// (a') The same with the killed instance started again at once, as systemd's `Restart=`
    /// does: the fresh instance has followed the source only since after the killed leader's
    /// last renewal, so it leaves the takeover to the standby, which evaluated the ticks
    /// between the kill and the fresh instance's subscription and enters their events.
    @Test func twentyKillsWithTheKilledInstanceRestartedAtOnce() async throws {
        try await Self.kills(20, restartAtOnce: true)
    }

    /// `count` kills of the leader under the stream (cases a and a').
    static func kills(_ count: Int, restartAtOnce: Bool) async throws {
        try await Rig.with { rig in
            let expected = try Expected(rules: rig.rules)
            try await Self.leaderAndStandby(rig, expected)
            var connections = [0: 1, 1: 2]
            var rng = SeededRandom(seed: 0x2827)
            var leader = 0
            var failovers: [Duration] = []
            for _ in 0..<count {
                let standby = 1 - leader
                try await rig.broadcast.waitUntilFollowing(connection: connections[standby]!, ticks: 10)
                try await rig.waitForDeliveries(expected)
                // A random moment: 0 to 40 ticks (0 to ~0.8 s) later.
                try await rig.broadcast.waitForMoreTicks(Int.random(in: 0...40, using: &rng))
                let before = rig.leaderLines(standby)
                let span = rig.disruptions.begin()
                let killed = ContinuousClock.now
                try await rig.slots.stop(leader, signal: SIGKILL)
                rig.disruptions.pending(span, try await rig.pendingRows())
                if restartAtOnce {
                    connections[leader] = try rig.start(leader)
                    leader = try await rig.waitForLeader(among: [(standby, before), (leader, 0)])
                } else {
                    try await rig.waitForLeader(standby, before: before)
                    connections[leader] = try rig.start(leader)
                    leader = standby
                }
                failovers.append(.now - killed)
                rig.disruptions.end(span)
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
            let span = rig.disruptions.begin()
            kill(old.pid, SIGSTOP)
            rig.disruptions.pending(span, try await rig.pendingRows())
            try await rig.waitForLeader(1)
            try await rig.broadcast.waitForMoreTicks(50)
            try await rig.waitForDeliveries(expected)
            kill(old.pid, SIGCONT)
            try await old.occurrences(.stderr, of: Self.standbyLine, atLeast: standbyLines + 1, timeout: 90)
            rig.disruptions.end(span)
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

    /// (f) The whole machine paused, as a virtual machine is: both instances stopped with
    /// SIGSTOP while the exchange sends nothing, for longer than a lease and than
    /// `--stale-after`, then continued together. Each finds its feed silent and connects again,
    /// one before the other, and the exchange goes on as soon as their old connections are
    /// closed, so the ticks between the two subscriptions reach one instance only. Whichever
    /// leads afterwards, every event of every tick sent arrives. Three pauses.
    @Test func aWholeMachinePausedPastTheLeaseAndTheStaleLimitLosesNothing() async throws {
        try await Rig.with(arguments: ["--stale-after", "2s"]) { rig in
            let expected = try Expected(rules: rig.rules)
            try await Self.leaderAndStandby(rig, expected)
            for _ in 0..<3 {
                let instances = try [0, 1].map { try #require(rig.slots.process($0)) }
                let count = rig.exchange.connectionCount
                var old: [ScriptedConnection] = []
                for n in [count - 1, count] { old.append(try await rig.exchange.connection(n)) }
                #expect(old.allSatisfy { !$0.isClosed }, "each instance on one open connection")
                try await rig.broadcast.pause()
                // Everything sent so far arrived: what the instances read after the pause is new.
                try await rig.waitForDeliveries(expected)
                let span = rig.disruptions.begin()
                for instance in instances { kill(instance.pid, SIGSTOP) }
                rig.disruptions.pending(span, try await rig.pendingRows())
                // Paused until the store's clock says the lease has been over for a lease:
                // 6 s at least since the last renewal, past the 2 s stale limit too.
                try await rig.server.waitUntil(
                    "SELECT lease_until <= \(Self.storeClock) - 3000 FROM leadership WHERE source = 'binance'")
                for instance in instances { kill(instance.pid, SIGCONT) }
                for connection in old { try await connection.waitUntilClosed(timeout: .seconds(90)) }
                rig.broadcast.resume()
                for n in [count + 1, count + 2] {
                    try await rig.broadcast.waitUntilFollowing(connection: n, ticks: 10)
                }
                try await rig.server.waitUntil(
                    "SELECT lease_until > \(Self.storeClock) FROM leadership WHERE source = 'binance'")
                try await rig.broadcast.waitForMoreTicks(50)
                try await rig.waitForDeliveries(expected)
                rig.disruptions.end(span)
            }
            try await rig.finish(expected, feedAlerts: true)
        }
    }

    /// (c) The database restarted under the stream with two instances, and kept away longer
    /// than a lease: both wait for it, the source is led again once it is back, and nothing is
    /// lost; a repeat needs to have been sent while the database was away or before the
    /// instances caught up.
    @Test func aDatabaseRestartUnderTwoInstancesLosesNothing() async throws {
        try await Rig.with { rig in
            let expected = try Expected(rules: rig.rules)
            try await Self.leaderAndStandby(rig, expected)
            let instances = try [0, 1].map { try #require(rig.slots.process($0)) }
            let span = rig.disruptions.begin()
            try await rig.server.restart {
                for instance in instances {
                    _ = try await instance.line(.stderr, containing: "waiting for the database", timeout: 90)
                }
                // At least 4 s at a tick every 20 ms: longer than a lease (3 s).
                try await rig.broadcast.waitForMoreTicks(200)
            }
            for instance in instances {
                _ = try await instance.line(.stderr, containing: "connected again", timeout: 90)
            }
            try await rig.broadcast.waitForMoreTicks(100)
            try await rig.waitForDeliveries(expected)
            rig.disruptions.end(span)
            // The leases ran out while the database was away: the source was taken again.
            let epoch = try await rig.server.query("SELECT epoch FROM leadership WHERE source = 'binance'")
            #expect((Int(epoch.filter(\.isNumber)) ?? 0) >= 2, "epoch \(epoch)")
            try await rig.broadcast.waitForMoreTicks(100)
            try await rig.finish(expected)
        }
    }

    /// (e) A source a SIGHUP adds to the rule files takes a lease of its own (a single
    /// instance leads it in epoch 1), and the heartbeat says the instance follows it; a SIGHUP
    /// that removes it again releases that lease and the heartbeat drops it.
    @Test func aSourceAReloadAddsTakesItsOwnLeaseAndARemovedOneReleasesIt() async throws {
        try await Rig.with { rig in
            _ = try rig.start(0)
            try await rig.waitForLeader(0)
            let process = try #require(rig.slots.process(0))
            let rules = rig.dir.appendingPathComponent("rules.json")
            let endpoint = String(rig.rules[try #require(rig.rules.firstRange(of: #/"endpoint": "[^"]*"/#))])
            let added = rig.rules.replacingOccurrences(
                of: #""sources": {"#, with: #""sources": {"second": {"type": "binance", \#(endpoint)}, "#)
            #expect(added != rig.rules)
            try added.write(to: rules, atomically: true, encoding: .utf8)
            kill(process.pid, SIGHUP)
            _ = try await process.waitForStderrLine(containing: "source second: leader in epoch 1", timeout: 90)
            let holders = try await rig.server.query("SELECT source || ' ' || holder FROM leadership ORDER BY source")
            let leader = try #require(holders.split(separator: "\n").first { $0.hasPrefix("binance ") })
            #expect(holders.contains("second \(leader.dropFirst("binance ".count))"), "\(holders)")
            #expect(try await rig.server.query("SELECT sources FROM instances") == "{binance,second}\n")

            try rig.rules.write(to: rules, atomically: true, encoding: .utf8)
            kill(process.pid, SIGHUP)
            _ = try await process.waitForStderrLine(
                containing: "leadership: source second is no longer followed; its lease released", timeout: 90)
            let ended = try await rig.server.query(
                """
                SELECT lease_until <= (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT FROM leadership
                WHERE source = 'second'
                """)
            #expect(ended == "t\n")
            #expect(try await rig.server.query("SELECT sources FROM instances") == "{binance}\n")
            #expect(try await rig.slots.stop(0, signal: SIGTERM) == 0, "\(rig.slots.stderr)")
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
            let span = rig.disruptions.begin()
            try await rig.slots.stop(0, signal: SIGKILL)
            rig.disruptions.pending(span, try await rig.pendingRows())
            try await rig.waitForLeader(1)
            rig.disruptions.end(span)
            try await rig.broadcast.waitForMoreTicks(100)
            try await rig.finish(expected)
        }
    }
}

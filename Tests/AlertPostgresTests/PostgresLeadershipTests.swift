import AlertModel
import AlertOutbox
import AlertTestSupport
import Foundation
import Testing

@testable import AlertPostgres

#if canImport(Glibc)
import Glibc
#endif

/// Leadership per source and the fence, against a real server. Lease times are given as `now`
/// (an injected clock in epoch ms), so a takeover is decided by the lease, never by a sleep.
@Suite struct PostgresLeadershipTests {
    static let ttl: Int64 = 3_000

    @Test func contendersForOneSourceGetExactlyOneLeader() async throws {
        try await PostgresServer.with { server in
            let stores = try await withThrowingTaskGroup(of: PostgresStore.self) { group in
                for _ in 0..<4 { group.addTask { try await PostgresStoreTests.open(server) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Four instances ask for each of 5 sources at the same moment: one wins each.
            for source in ["binance", "coinbase", "kraken", "bybit", "okx"] {
                let won = try await withThrowingTaskGroup(of: PostgresLeadership.Lease?.self) { group in
                    for (n, store) in stores.enumerated() {
                        group.addTask {
                            try await store.leadership.acquire(source: source, instance: "i\(n)", ttl: Self.ttl, now: 0)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }.compactMap { $0 }
                }
                #expect(won.count == 1 && won.first?.epoch == 1, "\(source): \(won)")
            }
            // While the lease runs nobody else gets it, the holder's earlier self neither.
            let leases = try await stores[0].leadership.leases()
            let holder = try #require(leases.first { $0.source == "okx" })
            for (n, store) in stores.enumerated() {
                #expect(
                    try await store.leadership.acquire(
                        source: "okx", instance: "i\(n)", ttl: Self.ttl, now: Self.ttl - 1)
                        == nil)
            }
            // Once it has run out the next asker takes over, one epoch up.
            let next = try await stores[1].leadership.acquire(
                source: "okx", instance: "i1", ttl: Self.ttl, now: Self.ttl)
            #expect(next?.epoch == holder.epoch + 1 && next?.holder == "i1")
            for store in stores { await store.close() }
        }
    }

    @Test func aLeaderThatStopsRenewingCannotWriteAfterATakeover() async throws {
        try await PostgresServer.with { server in
            let old = try await PostgresStoreTests.open(server)
            let new = try await PostgresStoreTests.open(server)
            let first = try #require(
                try await old.leadership.acquire(source: "binance", instance: "a", ttl: Self.ttl, now: 0))
            let event = PostgresStoreTests.alert("btc-high", time: 1)
            #expect(try await old.outbox.enqueue(.event(event), sinks: ["hook"], now: 1, fence: first.fence).count == 1)
            // Renewed at 2 s, then paused: the lease ends at 5 s.
            let renewed = try #require(try await old.leadership.renew(first, ttl: Self.ttl, now: 2_000))
            #expect(renewed.until == 5_000)
            #expect(
                try await new.leadership.acquire(source: "binance", instance: "b", ttl: Self.ttl, now: 4_999) == nil)
            let second = try #require(
                try await new.leadership.acquire(source: "binance", instance: "b", ttl: Self.ttl, now: 5_000))
            #expect(second.epoch == 2)

            // The old leader wakes: its writes are refused, whole, and say who leads now.
            let late = PostgresStoreTests.alert("btc-low", time: 2)
            await #expect(throws: LostLeadership(fence: first.fence, epoch: 2, holder: "b")) {
                try await old.outbox.enqueue(.event(late), sinks: ["hook"], now: 6_000, fence: first.fence)
            }
            await #expect(throws: LostLeadership.self) {
                try await old.leadership.write(source: "binance", epoch: first.epoch) { connection, logger in
                    try await connection.query(
                        "INSERT INTO backfill_ledger VALUES ('binance', 'BTC-USD', 1, 1, 1)", logger: logger)
                }
            }
            #expect(try await old.leadership.renew(renewed, ttl: Self.ttl, now: 6_000) == nil)
            #expect(try await server.query("SELECT COUNT(*) FROM backfill_ledger") == "0\n")
            #expect(try await new.outbox.pending().map(\.delivery) == [.event(event)])
            // The new leader writes under its epoch; a source no one leads refuses every write.
            #expect(
                try await new.outbox.enqueue(.event(late), sinks: ["hook"], now: 6_000, fence: second.fence).count == 1)
            await #expect(
                throws: LostLeadership(fence: PostgresFence(source: "okx", epoch: 1), epoch: nil, holder: nil)
            ) {
                try await new.leadership.write(source: "okx", epoch: 1) { _, _ in }
            }
            await old.close()
            await new.close()
        }
    }

    @Test func aNewLeaderEntersOnlyTheEventsTheOldOneDidNot() async throws {
        try await PostgresServer.with { server in
            let store = try await PostgresStoreTests.open(server)
            let leadership = store.leadership
            let old = try #require(try await leadership.acquire(source: "kraken", instance: "a", ttl: Self.ttl, now: 0))
            let events = (1...3).map { PostgresStoreTests.alert("rule-\($0)", time: Int64($0)) }
            // The old leader entered the first two, and the first was delivered (its row gone),
            // then it died before saving its engine state.
            let entered = try await store.outbox.enqueue(
                .event(events[0]), sinks: ["hook", "mail"], now: 1, fence: old.fence)
            try await store.outbox.enqueue(.event(events[1]), sinks: ["hook"], now: 2, fence: old.fence)
            try await store.outbox.record(entered.map(\.id), .delivered)

            // The new leader evaluates the same ticks again from the last save: all three.
            let new = try #require(
                try await leadership.acquire(source: "kraken", instance: "b", ttl: Self.ttl, now: Self.ttl))
            var made: [OutboxEntry] = []
            for event in events {
                made += try await store.outbox.enqueue(
                    .event(event), sinks: ["hook", "mail"], now: 4_000, fence: new.fence)
            }
            // Only what the old leader never entered: rule-2 for mail, rule-3 for both.
            #expect(
                made.map { "\($0.delivery.id) \($0.sink)" } == [
                    "\(events[1].id) mail", "\(events[2].id) hook", "\(events[2].id) mail"
                ])
            #expect(try await store.outbox.pending().count == 4)
            // The ledger is pruned by age.
            #expect(try await store.outbox.pruneLedger(before: 3) == 3)
            #expect(try await server.query("SELECT COUNT(*) FROM outbox_ledger") == "3\n")
            await store.close()
        }
    }

    @Test func releaseHandsOverAtOnceAndEpochsOnlyGrow() async throws {
        try await PostgresServer.with { server in
            let store = try await PostgresStoreTests.open(server)
            let leadership = store.leadership
            var epochs: [Int64] = []
            var now: Int64 = 0
            for round in 0..<6 {
                let instance = "i\(round % 2)"
                let lease = try #require(
                    try await leadership.acquire(source: "bybit", instance: instance, ttl: Self.ttl, now: now))
                epochs.append(lease.epoch)
                now += 10
                try await leadership.release(lease, now: now)
            }
            #expect(epochs == Array(1...6))
            // The database's own clock, when no time is given.
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let lease = try #require(try await leadership.acquire(source: "okx", instance: "x", ttl: Self.ttl))
            #expect(lease.acquiredAt >= before - 60_000 && lease.until == lease.acquiredAt + Self.ttl)
            await store.close()
        }
    }

    /// An instance that asks by how long it has followed the source (`following`) takes a
    /// lease that ran out only when it followed since before the last leader's last renewal,
    /// or no other instance heard from within a lease has followed it for longer, or the lease
    /// has been over for a lease; a source never led it takes at once, having followed nothing.
    @Test func aLateFollowerLeavesATakeoverToAStandbyThatSawTheGap() async throws {
        try await PostgresServer.with { server in
            let store = try await PostgresStoreTests.open(server)
            let leadership = store.leadership
            let fresh = PostgresLeadership.Following(since: nil)
            let first = try #require(
                try await leadership.acquire(source: "binance", instance: "a", ttl: Self.ttl, now: 0, following: fresh))
            // Renewed at 2 s, then killed: the lease ends at 5 s. "b" has followed since 1 s,
            // "c" (a started again at once) since 5.5 s.
            _ = try await leadership.renew(first, ttl: Self.ttl, now: 2_000)
            for (id, seen, since) in [("a", 2_000, 0), ("b", 5_900, 1_000), ("c", 5_900, 5_500)] {
                try await leadership.heartbeat(
                    .init(
                        id: id, host: "h", pid: 1, startedAt: 0, sources: ["binance"],
                        following: ["binance": Int64(since)]), now: Int64(seen))
            }
            let late = PostgresLeadership.Following(since: 5_500)
            #expect(
                try await leadership.acquire(
                    source: "binance", instance: "c", ttl: Self.ttl, now: 6_000, following: late)
                    == nil)
            #expect(
                try await leadership.acquire(
                    source: "binance", instance: "c", ttl: Self.ttl, now: 6_000, following: fresh)
                    == nil)
            // Asked without the condition, the lease is anyone's once it ran out.
            let anyone = try await leadership.acquire(source: "kraken", instance: "a", ttl: Self.ttl, now: 0)
            #expect(try await leadership.acquire(source: "kraken", instance: "c", ttl: Self.ttl, now: 3_000) != nil)
            #expect(anyone?.epoch == 1)
            // The standby that followed since before the last renewal takes it.
            let taken = try await leadership.acquire(
                source: "binance", instance: "b", ttl: Self.ttl, now: 6_000, following: .init(since: 1_000))
            #expect(taken?.epoch == 2 && taken?.holder == "b")

            // b stops renewing (its lease ends at 9 s) but is still heard from, following the
            // source since 1 s; "e" has followed only since 8.5 s. e waits while b is heard
            // from within a lease, and takes the lease once it has been over for a lease.
            let e = PostgresLeadership.Following(since: 8_500)
            for (id, seen, since) in [("b", 11_500, 1_000), ("e", 11_500, 8_500)] {
                try await leadership.heartbeat(
                    .init(
                        id: id, host: "h", pid: 1, startedAt: 0, sources: ["binance"],
                        following: ["binance": Int64(since)]), now: Int64(seen))
            }
            #expect(
                try await leadership.acquire(source: "binance", instance: "e", ttl: Self.ttl, now: 11_999, following: e)
                    == nil)
            let over = try await leadership.acquire(
                source: "binance", instance: "e", ttl: Self.ttl, now: 12_000, following: e)
            #expect(over?.epoch == 3 && over?.holder == "e")
            // e's lease ends at 15 s, and no other follower has been heard from since 11.5 s:
            // "d", just started, takes it as soon as it has ended.
            #expect(
                try await leadership.acquire(
                    source: "binance", instance: "d", ttl: Self.ttl, now: 14_999, following: fresh)
                    == nil)
            let next = try await leadership.acquire(
                source: "binance", instance: "d", ttl: Self.ttl, now: 15_000, following: fresh)
            #expect(next?.epoch == 4)
            await store.close()
        }
    }

    /// The whole host paused for a minute (the database's clock jumps with it): every
    /// heartbeat is a minute old. A standby that wakes first, its feed connecting again, does
    /// not take the lease before the leader has had a lease to renew it. Once both feeds are
    /// back, the lease goes to the instance whose feed came back first: the leader that came
    /// back later hands it over at its renewal, and that instance takes it.
    @Test func afterAPauseOfTheWholeHostTheLeaseGoesToWhoseFeedCameBackFirst() async throws {
        try await PostgresServer.with { server in
            let store = try await PostgresStoreTests.open(server)
            let leadership = store.leadership
            func heartbeat(_ id: String, at seen: Int64, since: Int64?) async throws {
                try await leadership.heartbeat(
                    .init(
                        id: id, host: "h", pid: 1, startedAt: 0, sources: ["binance"],
                        following: since.map { ["binance": $0] } ?? [:]), now: seen)
            }
            let a = try #require(
                try await leadership.acquire(
                    source: "binance", instance: "a", ttl: Self.ttl, now: 0, following: .init(since: nil)))
            try await heartbeat("a", at: 2_000, since: 0)
            try await heartbeat("b", at: 2_000, since: 500)
            let renewed = try #require(
                try await leadership.renew(a, ttl: Self.ttl, now: 2_000, following: .init(since: 0)))
            // Paused from 2.1 s to 62 s. b's first heartbeat after it: its feed went silent and
            // is connecting again (or has just subscribed).
            try await heartbeat("b", at: 62_000, since: nil)
            for since: Int64? in [nil, 61_900] {
                #expect(
                    try await leadership.acquire(
                        source: "binance", instance: "b", ttl: Self.ttl, now: 62_000,
                        following: .init(since: since, aliveSince: 62_000)) == nil)
            }
            // a renews at its first round, its feed not back yet: b's is not either.
            try await heartbeat("a", at: 62_100, since: nil)
            let kept = try #require(
                try await leadership.renew(renewed, ttl: Self.ttl, now: 62_100, following: .init(since: nil)))
            // b's feed came back at 62.3 s, a's at 62.6 s: b saw the ticks between. a hands
            // the source over at its next renewal, and b takes it at once.
            try await heartbeat("b", at: 62_500, since: 62_300)
            try await heartbeat("a", at: 62_700, since: 62_600)
            #expect(
                try await leadership.renew(kept, ttl: Self.ttl, now: 62_700, following: .init(since: 62_600)) == nil)
            #expect(
                try await leadership.acquire(
                    source: "binance", instance: "a", ttl: Self.ttl, now: 62_800,
                    following: .init(since: 62_600, aliveSince: 62_100)) == nil)
            let taken = try await leadership.acquire(
                source: "binance", instance: "b", ttl: Self.ttl, now: 62_900,
                following: .init(since: 62_300, aliveSince: 62_000))
            #expect(taken?.epoch == 2 && taken?.holder == "b")
            // b keeps it: a has followed only since later.
            let bLease = try #require(taken)
            #expect(
                try await leadership.renew(bLease, ttl: Self.ttl, now: 63_400, following: .init(since: 62_300)) != nil)
            // Had a been paused alone (b alive throughout), b would take the lease once it ran
            // out, as before: its heartbeats have no gap.
            await store.close()
        }
    }

    @Test func heartbeatsShowEachSourcesLeaderAndStandbys() async throws {
        try await PostgresServer.with { server in
            let store = try await PostgresStoreTests.open(server)
            let leadership = store.leadership
            for (id, seen) in [("a", 9_000), ("b", 9_500), ("gone", 100)] {
                try await leadership.heartbeat(
                    .init(id: id, host: "host-\(id)", pid: 7, startedAt: 1, sources: ["binance", "kraken"]),
                    now: Int64(seen))
            }
            _ = try await leadership.acquire(source: "binance", instance: "a", ttl: Self.ttl, now: 8_000)
            _ = try await leadership.acquire(source: "kraken", instance: "b", ttl: Self.ttl, now: 1_000)
            let (now, roles) = try await leadership.roles(now: 10_000, stale: 5_000)
            #expect(now == 10_000)
            #expect(roles.map(\.source) == ["binance", "kraken"])
            #expect(roles[0].lease?.holder == "a" && roles[0].standbys == ["b"])
            // kraken's lease ended at 4 s: no leader, both live instances stand by.
            #expect(roles[1].lease?.until == 4_000 && roles[1].standbys == ["a", "b"])
            try await leadership.forget(instance: "a")
            #expect(try await leadership.instances().map(\.id) == ["b", "gone"])
            // A heartbeat forgets those not heard from for long: "gone" was last seen at 100 ms.
            try await leadership.heartbeat(
                .init(id: "b", host: "host-b", pid: 7, startedAt: 1, sources: ["binance"]), now: 10_101,
                forgetAfter: 10_000)
            #expect(try await leadership.instances().map(\.id) == ["b"])
            await store.close()
        }
    }

    /// A leader stopped by SIGSTOP in the middle of a fenced transaction holds the source's row;
    /// the server ends its session after `idleLimit`, the standby takes over, and the leader,
    /// continued, commits nothing. The stopped leader is `psql` running the fence's statements.
    @Test func aLeaderStoppedInsideAFencedWriteDelaysNoTakeover() async throws {
        try await PostgresServer.with { server in
            let store = try await PostgresStoreTests.open(server)
            let first = try #require(
                try await store.leadership.acquire(source: "coinbase", instance: "a", ttl: Self.ttl, now: 0))
            // psql runs the fence's own statements, then stops itself (SIGSTOP) inside the
            // transaction; once continued it writes and commits.
            let fence = PostgresLeadership.fenceSQL
            let script = """
                BEGIN;
                \(fence[0]);
                PREPARE fence(TEXT) AS \(fence[1]);
                EXECUTE fence('coinbase');
                \\! echo stopping; kill -STOP $PPID
                INSERT INTO backfill_ledger VALUES ('coinbase', 'BTC-USD', 1, 1, 1);
                COMMIT;

                """
            let leader = try ObservedProcess(
                PostgresServer.binaries.appendingPathComponent("psql"),
                [
                    "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(server.port)", "-U", "pricealert",
                    "-d", "pricealert"
                ],
                environment: ["PGPASSWORD": server.password, "PATH": "/usr/bin:/bin"], input: Array(script.utf8))
            _ = try await leader.line(.stdout, containing: "stopping", timeout: 60)
            try await Self.waitUntilStopped(leader.pid)
            // The takeover waits for the row, and gets it once the server ends the stalled
            // session: after the idle limit, well within a lease.
            let second = try await LeadershipService.within(.seconds(120)) {
                try await store.leadership.acquire(source: "coinbase", instance: "b", ttl: Self.ttl, now: Self.ttl)
            }
            #expect(second?.epoch == first.epoch + 1)
            kill(leader.pid, SIGCONT)
            let result = try await leader.wait(timeout: 60)
            #expect(result.status != 0, "psql: \(result.stderr)")
            #expect(try await server.query("SELECT COUNT(*) FROM backfill_ledger") == "0\n")
            await store.close()
        }
    }

    /// Suspends until the child `pid` has stopped (waitid with WSTOPPED, leaving it waitable).
    static func waitUntilStopped(_ pid: Int32) async throws {
        let stopped = await Task.detached {
            var info = siginfo_t()
            return waitid(P_PID, id_t(pid), &info, WSTOPPED | WNOWAIT) == 0
        }.value
        try #require(stopped, "waitid: \(String(cString: strerror(errno)))")
    }
}

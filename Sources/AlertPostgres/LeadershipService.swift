import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps this instance's role for each source it follows, leader under an epoch or standby,
/// and publishes every change (`changes`), as a swift-service-lifecycle `Service`
/// (Docs/postgres.md#several-instances).
///
/// Every `settings.tick` it records a heartbeat, renews the leases it holds and asks for the
/// sources it does not lead. Given `following` (`run`), it asks for a lease that ran out only
/// as `PostgresLeadership.acquire(following:)` allows: once it has followed the source since
/// before the last leader's last renewal, or no other follower is alive, or the lease has been
/// over for a whole lease; a source never led it takes at once. Its heartbeat says which
/// sources it evaluates now and since when, and it renews a lease only while no other live
/// instance has followed the source for longer: otherwise it hands the source over (the lease
/// ends at once), so the source is led by the instance that saw the most of its feed. After a
/// gap of a lease or more in its own heartbeats (the host or the database paused), it judges
/// the others by their heartbeats only after a lease. The sources may change while
/// it runs (`follow`): it asks for the added ones and releases the removed ones. A lease it
/// cannot renew (taken over, or the database out of reach) makes it a standby. It counts its own lease as ended a whole `settings.ttl` after the start
/// of the last renewal that succeeded, on its own clock; the store counts from when the renewal
/// ran, which is later, so `role(of:)` never says leader after the store's lease ended (a
/// published change may come up to a tick later; the fence refuses writes in between). A
/// round that takes longer than a lease counts as a lost connection. It reconnects after any
/// error, `settings.tick` apart. On graceful
/// shutdown it releases its leases (a standby takes over at its next tick) and deletes its
/// heartbeat.
///
/// With the defaults (lease 3 s, tick 500 ms) a standby takes over a lost leader's source
/// within lease + tick + one round trip: 3.5 s and a little.
public final class LeadershipService: Service, Sendable {
    /// What this instance is for a source.
    public enum Role: Sendable, Equatable, CustomStringConvertible {
        /// It leads the source: every write goes under this epoch.
        case leader(epoch: Int64)
        /// Another instance leads it, or no one does yet.
        case standby

        public var description: String {
            switch self {
            case .leader(let epoch): "leader (epoch \(epoch))"
            case .standby: "standby"
            }
        }
    }

    /// A source's new role.
    public struct Change: Sendable, Equatable {
        public var source: String
        public var role: Role
    }

    public struct Settings: Sendable {
        /// How long a lease runs without renewal.
        public var ttl: Duration = .seconds(3)
        /// How often leases are renewed and sources asked for.
        public var tick: Duration = .milliseconds(500)

        public init(ttl: Duration = .seconds(3), tick: Duration = .milliseconds(500)) {
            self.ttl = ttl
            self.tick = tick
        }
    }

    public let instance: PostgresLeadership.Instance
    /// The leases it asks for: `run` gives each source's (`SourceLeases.all`); any other name
    /// works the same (a sink's digests, `sink:NAME`), as long as no source is named like it.
    public var sources: [String] { followedSources.withLock { $0 } }
    private let followedSources: Mutex<[String]>
    let settings: Settings
    let open: @Sendable () async throws -> PostgresStore
    let logger: Logger
    /// Since when (this process's clock) it has evaluated a source's prices without a break;
    /// nil: it asks for leases without that condition.
    let following: (@Sendable (String) -> ContinuousClock.Instant?)?
    private let state = Mutex<[String: Held]>([:])
    /// Each followed source's unbroken run as the heartbeat says it: its start on this process's
    /// clock and on the store's, converted once per run so that every round names the same
    /// instant (a conversion varies by a round trip, and two instances compare these).
    private let runs = Mutex<[String: (local: ContinuousClock.Instant, store: Int64)]>([:])
    /// The store's time of the last heartbeat written, and of the first of the unbroken run of
    /// them it belongs to (`PostgresLeadership.Following.aliveSince`).
    private let alive = Mutex<(last: Int64?, since: Int64)>((nil, 0))
    private let published: AsyncStream<Change>.Continuation
    /// Every role change, in order, from the first role each source gets. One consumer.
    public let changes: AsyncStream<Change>

    /// A lease this instance holds and when its last renewal started.
    private struct Held {
        var lease: PostgresLeadership.Lease
        var renewedAt: ContinuousClock.Instant
    }

    /// `open` connects to the store (a connection of the service's own, so renewals never
    /// wait behind other writes).
    public init(
        instance: PostgresLeadership.Instance, sources: [String], settings: Settings = Settings(),
        logger: Logger, following: (@Sendable (String) -> ContinuousClock.Instant?)? = nil,
        open: @escaping @Sendable () async throws -> PostgresStore
    ) {
        self.instance = instance
        followedSources = Mutex(sources)
        self.following = following
        self.settings = settings
        self.open = open
        self.logger = logger
        (changes, published) = AsyncStream<Change>.makeStream()
    }

    /// The sources to lead from now on (a reload added or removed some): the added ones are
    /// asked for, and the leases of the removed ones released, at the next tick.
    public func follow(_ sources: [String]) {
        followedSources.withLock { $0 = sources }
    }

    /// This instance's role for `source` now: leader only while a whole lease has not passed
    /// since its last renewal started, even when the renewal after it has not returned yet.
    public func role(of source: String) -> Role {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard let held = state[source], now - held.renewedAt < settings.ttl else { return .standby }
            return .leader(epoch: held.lease.epoch)
        }
    }

    public func run() async throws {
        let store = await cancelWhenGracefulShutdown {
            var store: PostgresStore?
            var told: [String: Role] = [:]
            // A store out of reach is said once, and again when it answers, not at every tick.
            var unreachable: (since: ContinuousClock.Instant, rounds: Int)?
            while !Task.isCancelled {
                do {
                    if store == nil { store = try await self.open() }
                    let leadership = store!.leadership
                    try await Self.within(self.settings.ttl) { try await self.tick(leadership) }
                    if let (since, rounds) = unreachable {
                        let seconds = Double((ContinuousClock.now - since).milliseconds) / 1000
                        self.logger.notice(
                            "leadership: the store answers again after \(String(format: "%.1f", seconds)) s and \(rounds) failed round\(rounds == 1 ? "" : "s")"
                        )
                        unreachable = nil
                    }
                } catch is TimedOut {
                    // The connection stopped answering: its queue ends when the connection does.
                    self.failed(
                        "the store did not answer within \(self.settings.ttl); reconnecting", &unreachable)
                    if let abandoned = store { Task { await abandoned.close() } }
                    store = nil
                } catch {
                    self.failed("cannot reach the store: \(error); retrying every \(self.settings.tick)", &unreachable)
                    await store?.close()
                    store = nil
                }
                self.expireUnrenewed()
                self.publish(&told)
                do { try await Task.sleep(for: self.settings.tick) } catch { break }
            }
            return store
        }
        published.finish()
        guard let store else { return }
        let held = state.withLock { state in
            defer { state = [:] }
            return state.values.map(\.lease)
        }
        for lease in held { try? await store.leadership.release(lease) }
        try? await store.leadership.forget(instance: instance.id)
        await store.close()
    }

    /// A failed round: the first of a spell is a warning, the others are debug lines.
    private func failed(_ reason: String, _ unreachable: inout (since: ContinuousClock.Instant, rounds: Int)?) {
        if let spell = unreachable {
            unreachable = (spell.since, spell.rounds + 1)
            logger.debug("leadership: \(reason)")
        } else {
            unreachable = (ContinuousClock.now, 1)
            logger.warning("leadership: \(reason)")
        }
    }

    /// One round: heartbeat, release what is no longer followed, renew what is held, ask for
    /// the rest.
    private func tick(_ leadership: PostgresLeadership) async throws {
        let ttl = Int64(settings.ttl / .milliseconds(1))
        let sources = self.sources
        var instance = self.instance
        instance.sources = sources
        instance.following =
            following.map { followed in
                runs.withLock { runs in
                    runs = runs.filter { source, run in followed(source) == run.local }
                    return runs.mapValues(\.store)
                }
            } ?? [:]
        let at = ContinuousClock.now
        // The store's clock at this process's instant `at`, read late by the round trip at
        // most: a time since which this instance has followed a source is never read early.
        let seen = try await leadership.heartbeat(instance)
        let aliveSince = alive.withLock { alive in
            if let last = alive.last, seen - last < ttl {
                alive.last = seen
            } else {
                alive = (last: seen, since: seen)
            }
            return alive.since
        }
        let removed = state.withLock { state in
            let gone = state.filter { !sources.contains($0.key) }.map(\.value.lease)
            for lease in gone { state[lease.source] = nil }
            return gone
        }
        for lease in removed {
            // Not released (the store away): it runs out within a lease.
            try? await leadership.release(lease)
            logger.notice("leadership: source \(lease.source) is no longer followed; its lease released")
        }
        for source in sources {
            let started = ContinuousClock.now
            let following = self.following.map { followed in
                PostgresLeadership.Following(
                    since: followed(source).map { local in
                        runs.withLock { runs in
                            if let run = runs[source], run.local == local { return run.store }
                            let store = seen + Int64((local - at) / .milliseconds(1))
                            runs[source] = (local, store)
                            return store
                        }
                    }, aliveSince: aliveSince)
            }
            if let held = state.withLock({ $0[source] }) {
                let renewed = try await leadership.renew(held.lease, ttl: ttl, following: following)
                state.withLock {
                    $0[source] = renewed.map { Held(lease: $0, renewedAt: started) }
                }
                if renewed == nil {
                    logger.warning(
                        "leadership: source \(source) was taken over, or handed to an instance that has followed it without a break for longer; standby now"
                    )
                }
            } else if let lease = try await leadership.acquire(
                source: source, instance: instance.id, ttl: ttl, following: following)
            {
                state.withLock { $0[source] = Held(lease: lease, renewedAt: started) }
                logger.info("leadership: leading source \(source) in epoch \(lease.epoch)")
            }
        }
    }

    /// Drops every lease whose last renewal started a whole lease ago: the store may have
    /// given it to another instance by now.
    private func expireUnrenewed() {
        let now = ContinuousClock.now
        let dropped = state.withLock { state in
            let old = state.filter { now - $0.value.renewedAt >= settings.ttl }.map(\.key)
            for source in old { state[source] = nil }
            return old
        }
        for source in dropped {
            logger.warning("leadership: lease of source \(source) not renewed in time; standby now")
        }
    }

    /// `body`'s value, or `TimedOut` once `limit` has passed; `body` is then left to end on its
    /// own (a statement on a connection that stopped answering ends when the connection does).
    static func within<T: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let waiting = Waiting<T>()
        return try await withCheckedThrowingContinuation { continuation in
            waiting.continuation.withLock { $0 = continuation }
            let timer = Task {
                try await Task.sleep(for: limit)
                waiting.resume(with: .failure(TimedOut()))
            }
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                timer.cancel()
                waiting.resume(with: result)
            }
        }
    }

    /// A continuation resumed by whichever comes first.
    private final class Waiting<T: Sendable>: Sendable {
        let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

        func resume(with result: Result<T, any Error>) {
            continuation.withLock { $0.take() }?.resume(with: result)
        }
    }

    struct TimedOut: Error {}

    private func publish(_ told: inout [String: Role]) {
        let sources = self.sources
        for source in told.keys where !sources.contains(source) { told[source] = nil }
        for source in sources {
            let role = role(of: source)
            if told[source] != role {
                told[source] = role
                published.yield(Change(source: source, role: role))
            }
        }
    }
}

extension PostgresLeadership.Instance {
    /// This process: `name` as its id when given, else `HOST-PID-STARTED` (start time in epoch
    /// ms), unique across restarts and hosts.
    public static func current(name: String? = nil, sources: [String]) -> Self {
        var host = [CChar](repeating: 0, count: 256)
        let hostName =
            gethostname(&host, host.count) == 0
            ? String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let started = Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
        let pid = Int64(getpid())
        return Self(
            id: name ?? "\(hostName)-\(pid)-\(started)", host: hostName, pid: pid, startedAt: started,
            sources: sources)
    }
}

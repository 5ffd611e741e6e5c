import AlertEngine
import AlertModel
import AlertOutbox
import AlertStore
import Logging
import Operations
import Platform
import ServiceLifecycle
import Synchronization

/// `run` as one of several instances sharing one PostgreSQL store
/// (Docs/postgres.md#several-instances): what the pipeline needs of the store's leadership,
/// without knowing the store. `run` makes it from `LeadershipService`.
public struct InstanceRoles: Sendable {
    /// Which lease each event and state row belongs to, and the epochs this instance leads.
    public var leases: SourceLeases
    /// Each lease's role changes, in order, from its first role (one reader).
    public var changes: AsyncStream<RoleChange>
    /// Events evaluated here whose write the store dropped because another instance leads
    /// their lease (one reader): the evaluator keeps them as a standby would.
    public var refused: AsyncStream<RefusedEvents>
    /// Each lease's last committed engine-state save (epoch ms, the saver's clock), by lease.
    public var saveMarks: @Sendable () async throws -> [String: Int64]
    /// At a takeover: the outbox rows earlier leaders of the lease left, for this instance's
    /// sink workers to deliver.
    public var adopt: @Sendable (_ lease: String, _ epoch: Int64) async throws -> [OutboxEntry]
    /// Deletes the outbox ledger's entries made before the time given (epoch ms); returns how
    /// many went. The home lease's leader calls it every `ledgerPruneEvery`.
    public var pruneLedger: @Sendable (_ before: Int64) async throws -> Int
    /// Keeps the leases (renewals, takeovers, heartbeats); stopped after delivery, so a
    /// leader's final save and outbox drain happen under its lease, which it then releases.
    public var leadership: any Service
    /// Follows the store's silences (instead of reading them every second).
    public var silenceWatcher: (any Service)?

    public init(
        leases: SourceLeases, changes: AsyncStream<RoleChange>, refused: AsyncStream<RefusedEvents>,
        saveMarks: @escaping @Sendable () async throws -> [String: Int64],
        adopt: @escaping @Sendable (String, Int64) async throws -> [OutboxEntry],
        pruneLedger: @escaping @Sendable (Int64) async throws -> Int, leadership: any Service,
        silenceWatcher: (any Service)?
    ) {
        self.leases = leases
        self.pruneLedger = pruneLedger
        self.changes = changes
        self.refused = refused
        self.saveMarks = saveMarks
        self.adopt = adopt
        self.leadership = leadership
        self.silenceWatcher = silenceWatcher
    }
}

/// A lease's new role for this instance: led under `epoch`, or standby (nil).
public struct RoleChange: Sendable, Equatable {
    public var lease: String
    public var epoch: Int64?

    public init(lease: String, epoch: Int64?) {
        self.lease = lease
        self.epoch = epoch
    }
}

/// Events of one lease whose write was dropped because another instance leads it, under
/// `leaderEpoch` (nil: the store named no epoch).
public struct RefusedEvents: Sendable {
    public var alerts: [Alert]
    public var leaderEpoch: Int64?

    public init(alerts: [Alert], leaderEpoch: Int64?) {
        self.alerts = alerts
        self.leaderEpoch = leaderEpoch
    }
}

/// Hands each role change to the evaluator (in order with the feeds' events) after adopting
/// the outbox rows an earlier leader left, shows the roles in `/metrics`
/// (`pricealert_source_leader`, `pricealert_source_epoch`) and `/healthz`, hands it the events
/// whose write another instance's lease refused, and reads the leases' save marks every
/// `markEvery` for the evaluator to forget what is saved.
final class RoleWatch: Service {
    let roles: InstanceRoles
    let inbox: Inbox<EvaluatorInput>
    let delivery: AlertDelivery
    let monitor: PipelineMonitor
    let logger: Logger
    let markEvery: Duration = .seconds(1)
    /// Each lease's role as `/healthz` says it.
    private let shown: Shown

    final class Shown: Sendable {
        let epochs: Mutex<[String: Int64?]>

        init(_ leases: [String]) {
            epochs = Mutex(Dictionary(uniqueKeysWithValues: leases.map { ($0, nil) }))
        }
    }

    init(
        roles: InstanceRoles, inbox: Inbox<EvaluatorInput>, delivery: AlertDelivery, monitor: PipelineMonitor,
        logger: Logger
    ) {
        self.roles = roles
        self.inbox = inbox
        self.delivery = delivery
        self.monitor = monitor
        self.logger = logger
        let (shown, leases) = (Shown(roles.leases.all), roles.leases)
        self.shown = shown
        monitor.status.watchRoles {
            let now = shown.epochs.withLock { $0 }
            return leases.all.map { lease in
                let role = now[lease].flatMap { $0 }.map { "leader (epoch \($0))" } ?? "standby"
                return (lease, role)
            }
        }
        for lease in leases.all { record(RoleChange(lease: lease, epoch: nil)) }
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.followChanges() }
                group.addTask {
                    for await refused in self.roles.refused { await self.inbox.send(.refused(refused)) }
                }
                group.addTask { await self.readMarks() }
                await group.next()
                group.cancelAll()
            }
        }
    }

    private func followChanges() async {
        for await change in roles.changes {
            if Task.isCancelled { return }
            record(change)
            if let epoch = change.epoch {
                logger.notice("source \(change.lease): leader in epoch \(epoch)")
                do {
                    let rows = try await roles.adopt(change.lease, epoch)
                    if !rows.isEmpty {
                        logger.notice(
                            "source \(change.lease): delivering \(rows.count) outbox rows an earlier leader left")
                        await delivery.adopt(rows)
                    }
                } catch {
                    logger.warning(
                        "source \(change.lease): cannot read the outbox rows an earlier leader left: \(error); they are delivered at the next takeover or start"
                    )
                }
            } else {
                logger.notice("source \(change.lease): standby (evaluating; neither saving nor sending)")
            }
            await inbox.send(.role(change))
        }
    }

    /// How long the outbox ledger keeps an entry: far longer than a standby keeps what it
    /// evaluated (`StandbyBuffer.maxAge`), so a takeover never enters an event twice because
    /// its entry was pruned.
    static let ledgerKeeps: Int64 = 86_400_000
    static let ledgerPruneEvery: Duration = .seconds(600)

    private func readMarks() async {
        var pruned: ContinuousClock.Instant?
        while !Task.isCancelled {
            if let marks = try? await roles.saveMarks(), !marks.isEmpty { await inbox.send(.saveMarks(marks)) }
            if roles.leases.epoch(of: roles.leases.home) != nil,
                pruned.map({ ContinuousClock.now - $0 >= Self.ledgerPruneEvery }) ?? true
            {
                pruned = .now
                do {
                    let gone = try await roles.pruneLedger(Wallclock.millis() - Self.ledgerKeeps)
                    if gone > 0 { logger.info("outbox ledger: \(gone) entries older than a day deleted") }
                } catch {
                    logger.warning("outbox ledger: cannot delete old entries: \(error); tried again later")
                }
            }
            try? await Task.sleep(for: markEvery)
        }
    }

    private func record(_ change: RoleChange) {
        shown.epochs.withLock { $0[change.lease] = .some(change.epoch) }
        monitor.metrics.role(source: change.lease, epoch: change.epoch)
    }
}

/// What a standby evaluated and may have to enter when it takes a lease over
/// (Docs/postgres.md#taking-over): per lease, the events in the order they were made, each with
/// the local time it was made, and the newest state of each symbol not saved by this instance.
/// Events made more than `margin` before the lease's last committed save are forgotten (the
/// leader entered them before that save: outbox before state), and so are events older than
/// `maxAge` or beyond `limit` per lease (said once), so memory stays bounded.
struct StandbyBuffer {
    var events: [String: [(at: Int64, alert: Alert)]] = [:]
    var state: [String: SymbolSnapshot] = [:]
    var margin: Int64 = 30_000
    var maxAge: Int64 = 3_600_000
    var limit = 100_000
    private(set) var overflowed: Set<String> = []

    /// Keeps `alert` of `lease`; true the first time the lease's buffer overflows.
    mutating func add(_ alert: Alert, lease: String, at now: Int64) -> Bool {
        events[lease, default: []].append((now, alert))
        guard let count = events[lease]?.count, count > limit else { return false }
        events[lease]?.removeFirst(count - limit)
        return overflowed.insert(lease).inserted
    }

    /// Forgets the events of each lease made before its mark less `margin`, and any older
    /// than `maxAge`.
    mutating func trim(marks: [String: Int64], now: Int64) {
        for (lease, kept) in events {
            let before = max(marks[lease].map { $0 - margin } ?? .min, now - maxAge)
            if let first = kept.first, first.at < before { events[lease] = kept.filter { $0.at >= before } }
        }
    }

    /// Takes the events and state of `lease` (`leaseOfKey` names a symbol's lease).
    mutating func take(_ lease: String, leaseOfKey: (String) -> String) -> ([Alert], [SymbolSnapshot]) {
        let taken = events.removeValue(forKey: lease)?.map(\.alert) ?? []
        let symbols = state.keys.filter { leaseOfKey($0) == lease }
        let snapshots = symbols.compactMap { state.removeValue(forKey: $0) }
        overflowed.remove(lease)
        return (taken, snapshots)
    }
}

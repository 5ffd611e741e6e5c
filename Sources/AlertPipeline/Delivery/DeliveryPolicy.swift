import AlertModel
import AlertPolicy
import AlertRules
import AlertStore
import Logging
import Operations
import Synchronization

/// The event-time stages in front of the outbox (Docs/sinks.md#notification-policy): every
/// event goes through `PolicyPipeline` (silence → priority → quiet hours → group), and what it
/// decides to deliver is handed back as a `Plan` for `AlertDelivery` to dispatch.
///
/// What the stages hold (quiet-hours holds, events in open digests) is journaled in the state
/// folder (`PolicyStateStore`), one row per (sink, event): a row is queued when the event
/// enters the stages, before anything later is committed, and removed only after the delivery
/// that carries it was handed to the outbox, so a crash repeats a delivery (same id) but never
/// loses one. `restore` feeds the rows back in order after a restart, which rebuilds the same
/// windows and digests because event time drives them. An event that arrives while the same
/// event (by id) is held for a sink is not taken again for that sink.
///
/// On a PostgreSQL store shared by several instances (`share`), the journal is the hand-over:
/// every instance journals the events for sinks with stages, and only the owner of the stages
/// (the home lease's leader) runs them, from the journal (`follow`).
public final class DeliveryPolicy: Sendable {
    /// Events the stages kept from the sinks over the run.
    public struct Counts: Sendable, Equatable {
        public var silenced = 0
        public var held = 0
        public var quietDropped = 0

        /// `2 events silenced, 5 held by quiet hours, 1 dropped by quiet hours`; nil when all are 0.
        public var summary: String? {
            let parts = [
                (silenced, "silenced"), (held, "held by quiet hours"), (quietDropped, "dropped by quiet hours")
            ]
            .filter { $0.0 > 0 }.map { "\($0.0) event\($0.0 == 1 ? "" : "s") \($0.1)" }
            return parts.isEmpty ? nil : parts.joined(separator: ", ")
        }
    }

    /// What to hand on after one step, in this order: digests (each for its own sink), then
    /// plain events (`notify` holds the sinks each goes to). `removed`: journal rows to delete
    /// once these are dispatched.
    public struct Plan: Sendable {
        var digests: [Digest] = []
        var events: [(alert: Alert, urgent: Bool)] = []
        var removed: [(sink: String, eventID: String)] = []

        var isEmpty: Bool { digests.isEmpty && events.isEmpty && removed.isEmpty }

        mutating func add(_ other: Plan) {
            digests += other.digests
            events += other.events
            removed += other.removed
        }
    }

    private struct Key: Hashable {
        var sink: String
        var id: String
    }

    private struct State {
        var pipeline: PolicyPipeline
        /// On a shared store (`share`): the epoch of the home lease under which this instance
        /// runs the staged sinks' stages; nil while it does not.
        var ownerEpoch: Int64?
        /// Rule ids with `"priority": "high"` (replaced by `use(_:)` on a rule reload).
        var highPriority: Set<String>
        var pending: Set<Key> = []
        var nextSeq: Int64 = 0
        var counts = Counts()
        /// What `publishWaiting` last recorded.
        var published: (held: Int, openDigests: Int, inDigests: Int)?
    }

    private let state: Mutex<State>
    /// Some rule has `"priority": "high"` (kept with `State.highPriority`).
    private let hasHighPriority: Atomic<Bool>
    /// Sinks with quiet hours or a group: the only ones that hold events.
    private let staged: Set<String>
    private let journal: (any PolicyJournal)?
    /// Some silence is known: with no staged sink and no high-priority rule either, events pass
    /// straight through (`passesUntouched`).
    private let hasSilences: Atomic<Bool>
    /// The stages as they start, without silences: what an owner of the stages that changed
    /// (`follow`) starts again from.
    private let fresh: PolicyPipeline
    /// Set on a shared store (`share`): the epoch of the lease whose leader runs the staged
    /// sinks' stages, when this instance leads it.
    private let owner = Mutex<(@Sendable () -> Int64?)?>(nil)
    private let logger = Logger(label: "pricealert.policy")

    /// Fails on a quiet-hours zone the system does not know (validation names it first).
    public init(ruleSet: RuleSet, silences: SilenceSet, journal: (any PolicyJournal)?) throws(UnknownZone) {
        let definitions = Array(ruleSet.sinks.values)
        let highPriority = Self.highPriority(of: ruleSet)
        fresh = try PolicyPipeline(sinks: definitions)
        var pipeline = fresh
        pipeline.silences = silences
        state = Mutex(State(pipeline: pipeline, highPriority: highPriority))
        hasHighPriority = Atomic(!highPriority.isEmpty)
        staged = Set(definitions.filter { !$0.policy.quiet.isEmpty || $0.policy.group != nil }.map(\.name))
        self.journal = journal
        hasSilences = Atomic(!silences.silences.isEmpty)
    }

    /// The silences in force from now on (a changed `silences.sqlite`).
    public func use(_ silences: SilenceSet) {
        state.withLock { state in
            state.pipeline.silences = silences
            hasSilences.store(!silences.silences.isEmpty, ordering: .relaxed)
        }
    }

    /// The priorities of reloaded rules, for the events received from now on. Sinks cannot
    /// change on a reload (`RuleReload` refuses that), so the stages' sinks stay as they are.
    public func use(_ ruleSet: RuleSet) {
        let highPriority = Self.highPriority(of: ruleSet)
        state.withLock { state in
            state.highPriority = highPriority
            hasHighPriority.store(!highPriority.isEmpty, ordering: .relaxed)
        }
    }

    private static func highPriority(of ruleSet: RuleSet) -> Set<String> {
        Set(ruleSet.rules.filter { $0.extras?.highPriority == true }.map(\.id))
    }

    /// True when no stage can act on any event: no silence, no quiet hours or group on any
    /// sink, no high-priority rule. The event then goes to its sinks as it is, skipping the
    /// stages' bookkeeping.
    public var passesUntouched: Bool {
        staged.isEmpty && !hasHighPriority.load(ordering: .relaxed) && !hasSilences.load(ordering: .relaxed)
    }

    public var counts: Counts { state.withLock { $0.counts } }

    /// Sinks with quiet hours or a group: the only ones whose stages hold events.
    public var stagedSinks: Set<String> { staged }

    /// What the stages keep now: events held by quiet hours, open digests and the events in them.
    public var waiting: (held: Int, openDigests: Int, inDigests: Int) {
        state.withLock { $0.pipeline.waiting }
    }

    /// Several instances share the store (Docs/postgres.md#digests-and-quiet-hours-across-instances):
    /// from now on `receive` only journals an event for a sink with stages, past the silences,
    /// and the stages of those sinks run where `owner` gives an epoch (the home lease's
    /// leader), fed from the shared journal by `follow`.
    public func share(owner: @escaping @Sendable () -> Int64?) {
        guard !staged.isEmpty else { return }
        self.owner.withLock { $0 = owner }
    }

    /// The epoch this instance owns the staged sinks' stages under, when the store is shared;
    /// `.some(nil)` while another instance owns them; nil when the store is not shared.
    public var sharedOwnerEpoch: Int64?? {
        owner.withLock { $0 }.map { $0() }
    }

    /// One event from the engine, `notify` being the sinks it goes to.
    public func receive(_ alert: Alert) -> Plan {
        let shared = owner.withLock { $0 != nil }
        return state.withLock { state in
            let sinks = alert.notify.filter { !state.pending.contains(Key(sink: $0, id: alert.id)) }
            guard !sinks.isEmpty || alert.notify.isEmpty else { return Plan() }
            if shared { return journalForOwner(alert, sinks: sinks, &state) }
            let event = PolicyEvent(alert: alert, sinks: sinks, highPriority: state.highPriority.contains(alert.rule))
            var added: [PolicyStateStore.Pending] = []
            let (plan, handed, held) = settle(state.pipeline.receive(event), of: alert.id, &state)
            if !handed.contains(Self.everySink) {
                for sink in sinks where staged.contains(sink) && !handed.contains(sink) {
                    state.pending.insert(Key(sink: sink, id: alert.id))
                    added.append(.init(seq: state.nextSeq, sink: sink, alert: alert, quiet: held.contains(sink)))
                    state.nextSeq += 1
                }
            }
            journal?.record(added: added, removed: [])
            publishWaiting(&state, always: false)
            return plan
        }
    }

    /// On a shared store: `alert` through silences and the stages of `sinks` without quiet
    /// hours or a group; for each sink with them, unless silenced, a row in the shared journal
    /// (fenced by the event's source's lease), which the stages' owner feeds to them (`follow`).
    private func journalForOwner(_ alert: Alert, sinks: [String], _ state: inout State) -> Plan {
        let local = sinks.filter { !staged.contains($0) }
        let event = PolicyEvent(alert: alert, sinks: local, highPriority: state.highPriority.contains(alert.rule))
        let (plan, handed, _) = settle(state.pipeline.receive(event), of: alert.id, &state)
        if !handed.contains(Self.everySink) {
            let added = sinks.filter(staged.contains).map {
                PolicyStateStore.Pending(seq: 0, sink: $0, alert: alert, quiet: nil)
            }
            journal?.record(added: added, removed: [])
        }
        return plan
    }

    /// On a shared store, once a second: the owner of the staged sinks' stages (`epoch`) feeds
    /// them the journal's rows they have not seen, in the journal's order, as they came
    /// (silences were applied by the leader that journalled them). An owner that is new, or
    /// owns under a new epoch, starts from fresh stages and feeds every row: the held windows
    /// and open digests are rebuilt from the journal, with the same digest ids. An instance
    /// that stops owning them forgets what its stages held.
    public func follow(_ rows: [PolicyStateStore.Pending], epoch: Int64?) -> Plan {
        state.withLock { state in
            if state.ownerEpoch != epoch {
                let silences = state.pipeline.silences
                state.pipeline = fresh
                state.pipeline.silences = silences
                state.pending.removeAll()
                state.ownerEpoch = epoch
            }
            guard epoch != nil else {
                publishWaiting(&state, always: false)
                return Plan()
            }
            let unseen = rows.filter { !state.pending.contains(Key(sink: $0.sink, id: $0.alert.id)) }
            return feed(unseen, &state, restoring: false)
        }
    }

    /// Closes the quiet windows and digests whose end the wall clock has passed (`run`, `check`).
    /// Also publishes what the stages keep to `/metrics`, so the gauges are right within a
    /// close of the metrics backend starting.
    public func close(wallTime: Int64) -> Plan {
        state.withLock { state in
            let plan = settle(state.pipeline.close(wallTime: wallTime), of: nil, &state).plan
            publishWaiting(&state, always: true)
            return plan
        }
    }

    /// Closes everything still open (the end of a replay).
    public func finish() -> Plan {
        state.withLock { state in
            let plan = settle(state.pipeline.finish(), of: nil, &state).plan
            publishWaiting(&state, always: false)
            return plan
        }
    }

    /// Records `waiting` in the gauges of `PolicyMetrics` when it changed (or `always`).
    private func publishWaiting(_ state: inout State, always: Bool) {
        guard !staged.isEmpty else { return }
        let now = state.pipeline.waiting
        guard always || state.published.map({ $0 != now }) ?? true else { return }
        state.published = now
        PolicyMetrics.waiting(held: now.held, openDigests: now.openDigests, inDigests: now.inDigests)
    }

    /// Feeds journaled rows back into the stages, in order, past the silences in force (they were
    /// let in before) and without counting them again. What no longer stays (a sink without
    /// stages now) is in the plan.
    public func restore(_ rows: [PolicyStateStore.Pending]) -> Plan {
        state.withLock { state in feed(rows, &state, restoring: true) }
    }

    /// `rows` into the stages, in order, past the silences in force; `restoring` what was held
    /// before, without counting or logging the holds again.
    private func feed(_ rows: [PolicyStateStore.Pending], _ state: inout State, restoring: Bool) -> Plan {
        let (silences, counts) = (state.pipeline.silences, state.counts)
        state.pipeline.silences = SilenceSet()
        defer {
            state.pipeline.silences = silences
            if restoring { state.counts = counts }
        }
        var plan = Plan()
        for row in rows {
            state.nextSeq = max(state.nextSeq, row.seq + 1)
            let key = Key(sink: row.sink, id: row.alert.id)
            state.pending.insert(key)
            let (step, handed, _) = settle(
                // A row held before was no high-priority event; one journalled by a leader on a
                // shared store may be, and skips the stages here.
                state.pipeline.receive(
                    PolicyEvent(
                        alert: row.alert, sinks: [row.sink],
                        highPriority: !restoring && state.highPriority.contains(row.alert.rule))),
                of: row.alert.id, &state, restoring: restoring)
            plan.add(step)
            if handed.contains(row.sink), state.pending.remove(key) != nil {
                plan.removed.append((row.sink, row.alert.id))
            }
        }
        publishWaiting(&state, always: false)
        return plan
    }

    /// Deletes the journal rows of what was dispatched (call after handing the plan's
    /// deliveries to the dispatcher).
    public func dispatched(_ plan: Plan) {
        journal?.record(added: [], removed: plan.removed)
    }

    /// Why journal rows are not written yet (nil: all are, as of the last commit).
    public var unwritten: String? { journal?.unwritten }

    /// Marks an event the stages took from every sink (silenced).
    private static let everySink = "\u{0}"

    /// The plan for `decisions`, the sinks to which the event `eventID` (the one that made
    /// them, if any) is handed, delivered or dropped (`everySink` when silenced): the event is
    /// pending for its other staged sinks; and the sinks whose quiet hours hold it. Each hold
    /// is logged at `info` and counted, except when `restoring` what was held before.
    private func settle(
        _ decisions: [PolicyDecision], of eventID: String?, _ state: inout State, restoring: Bool = false
    )
        -> (plan: Plan, handed: Set<String>, held: Set<String>)
    {
        var plan = Plan()
        var handed: Set<String> = []
        var held: Set<String> = []
        var eventAt: [String: Int] = [:]
        for decision in decisions {
            switch decision {
            case .silenced(let id, let silence):
                state.counts.silenced += 1
                PolicyMetrics.silenced()
                logger.debug("silenced \(id) (silence \(silence))")
                handed.insert(Self.everySink)
            case .held(let sink, let id):
                held.insert(sink)
                guard !restoring else { break }
                state.counts.held += 1
                PolicyMetrics.held()
                let until = state.pipeline.heldUntil(sink: sink).map { " until \(Timestamp.format($0))" } ?? ""
                logger.info(
                    "held \(UserText.single(id)) for sink \(UserText.single(sink))\(until), the end of its quiet hours; it is delivered then in one digest"
                )
            case .quietDropped(let sink, let id):
                state.counts.quietDropped += 1
                logger.debug("dropped \(id) for sink '\(sink)' in its quiet hours")
                handed.insert(sink)
            case .deliver(let sink, let delivery, let urgent):
                for event in delivery.events {
                    if event.id == eventID { handed.insert(sink) }
                    if state.pending.remove(Key(sink: sink, id: event.id)) != nil {
                        plan.removed.append((sink, event.id))
                    }
                }
                switch delivery {
                case .digest(let digest):
                    plan.digests.append(digest)
                case .event(var alert):
                    // One dispatch per event and urgency, to all its sinks at once.
                    let key = (urgent ? "!" : "") + alert.id
                    if let at = eventAt[key] {
                        plan.events[at].alert.notify.append(sink)
                    } else {
                        alert.notify = [sink]
                        eventAt[key] = plan.events.count
                        plan.events.append((alert, urgent))
                    }
                }
            }
        }
        return (plan, handed, held)
    }
}

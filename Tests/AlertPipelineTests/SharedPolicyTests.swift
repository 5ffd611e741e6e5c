import AlertModel
import AlertPolicy
import AlertRules
import AlertStore
import Synchronization
import Testing

@testable import AlertPipeline

/// The policy of several instances on one store (Docs/postgres.md#digests-and-quiet-hours-across-instances):
/// leaders only journal what goes to a sink with stages, and the owner feeds the journal's rows
/// to its stages; a new owner rebuilds them from the rows.
@Suite struct SharedPolicyTests {
    /// A journal in memory, numbering rows as the store's sequence does.
    final class Journal: PolicyJournal {
        let rows = Mutex<(rows: [PolicyStateStore.Pending], next: Int64)>(([], 0))

        func load() async throws -> [PolicyStateStore.Pending] { rows.withLock { $0.rows } }

        func record(added: [PolicyStateStore.Pending], removed: [(sink: String, eventID: String)]) {
            rows.withLock { state in
                state.rows.removeAll { row in removed.contains { $0.sink == row.sink && $0.eventID == row.alert.id } }
                for var row in added
                where !state.rows.contains(where: { $0.sink == row.sink && $0.alert.id == row.alert.id }) {
                    row.seq = state.next
                    state.next += 1
                    state.rows.append(row)
                }
            }
        }

        var unwritten: String? { nil }
        var all: [PolicyStateStore.Pending] { rows.withLock { $0.rows } }
    }

    static let rules = """
        {"version": 2,
         "sinks": {"ops": {"type": "stdout", "group": {"window": "1h", "max": 3}}, "out": {"type": "stdout"}},
         "rules": [{"id": "up", "symbol": "BTC", "when": {"price": {"above": 100}}, "notify": ["ops", "out"]},
                   {"id": "now", "symbol": "ETH", "priority": "high", "when": {"price": {"above": 1}},
                    "notify": ["ops"]}]}
        """

    static func policy(_ journal: Journal, owner: Int64?) throws -> DeliveryPolicy {
        let policy = try DeliveryPolicy(
            ruleSet: try EvaluatorTests.rules(rules), silences: SilenceSet(), journal: journal)
        policy.share { owner }
        return policy
    }

    static func event(_ rule: String, time: Int64) -> Alert {
        Alert(
            rule: rule, symbol: rule == "now" ? "ETH" : "BTC", time: time, price: 101, condition: "above",
            threshold: .value(100), value: 101, message: "\(rule) at \(time)", notify: ["ops", "out"])
    }

    @Test func leadersJournalAndTheOwnerClosesOneDigestOfEveryInstancesEvents() throws {
        let journal = Journal()
        let (leader, owner) = (try Self.policy(journal, owner: nil), try Self.policy(journal, owner: 1))
        let first = leader.receive(Self.event("up", time: 1))
        // The sink without stages gets the event at once; the group's sink only a journal row.
        #expect(first.events.map(\.alert.notify) == [["out"]] && first.digests.isEmpty)
        _ = owner.receive(Self.event("up", time: 2))
        #expect(journal.all.map(\.alert.time) == [1, 2])
        #expect(owner.follow(journal.all, epoch: 1).digests.isEmpty)
        _ = leader.receive(Self.event("up", time: 3))
        // The owner feeds only the rows it has not seen: the third fills the digest.
        let closed = owner.follow(journal.all, epoch: 1)
        #expect(closed.digests.map(\.id) == ["digest:ops:\(Self.event("up", time: 1).id)"])
        #expect(closed.digests.first?.events.map(\.time) == [1, 2, 3])
        owner.dispatched(closed)
        #expect(journal.all.isEmpty)
        // A leader's follow does nothing: it runs no stages.
        _ = leader.receive(Self.event("up", time: 4))
        #expect(
            leader.follow(journal.all, epoch: nil).digests.isEmpty
                && leader.waiting == (held: 0, openDigests: 0, inDigests: 0))
    }

    @Test func aNewOwnerRebuildsTheOpenDigestAndAnOldOneForgetsIt() throws {
        let journal = Journal()
        let leader = try Self.policy(journal, owner: nil)
        let (old, new) = (try Self.policy(journal, owner: 1), try Self.policy(journal, owner: 2))
        for time: Int64 in [1, 2] { _ = leader.receive(Self.event("up", time: time)) }
        _ = old.follow(journal.all, epoch: 1)
        #expect(old.waiting == (held: 0, openDigests: 1, inDigests: 2))
        // The old owner loses the home lease: it forgets; the new one rebuilds from the rows.
        _ = old.follow(journal.all, epoch: nil)
        #expect(old.waiting == (held: 0, openDigests: 0, inDigests: 0))
        #expect(new.follow(journal.all, epoch: 2).digests.isEmpty)
        #expect(new.waiting == (held: 0, openDigests: 1, inDigests: 2))
        _ = leader.receive(Self.event("up", time: 3))
        let closed = new.follow(journal.all, epoch: 2)
        #expect(closed.digests.map(\.id) == ["digest:ops:\(Self.event("up", time: 1).id)"])
        #expect(closed.digests.first?.events.count == 3)
    }

    /// A high-priority event for a sink with stages is journalled too, and the owner delivers
    /// it alone, past the group.
    @Test func aHighPriorityEventSkipsTheOwnersGroup() throws {
        let journal = Journal()
        let (leader, owner) = (try Self.policy(journal, owner: nil), try Self.policy(journal, owner: 1))
        var urgent = Self.event("now", time: 1)
        urgent.notify = ["ops"]
        #expect(leader.receive(urgent).events.isEmpty)
        let plan = owner.follow(journal.all, epoch: 1)
        #expect(plan.events.map(\.alert.id) == [urgent.id] && plan.events.first?.urgent == true)
    }
}

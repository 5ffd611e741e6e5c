import AlertEngine
import AlertModel
import AlertStore
import Logging
import Operations
import Testing

@testable import AlertPipeline

/// What a standby keeps for a takeover (Docs/postgres.md#taking-over), and which lease each
/// key and event belongs to (`SourceLeases`).
@Suite("standby buffer and leases")
struct StandbyBufferTests {
    static func alert(_ time: Int64, source: String? = nil) -> Alert {
        var alert = Alert(
            rule: "up", symbol: "BTC", time: time, price: 1, condition: "crossesAbove", threshold: .value(1),
            value: 1, message: "", notify: ["ops"])
        alert.source = source
        return alert
    }

    @Test func eventsBeforeTheLeadersSaveLessTheMarginAreForgotten() {
        var buffer = StandbyBuffer()
        for at in [0, 50_000, 70_000, 100_000] as [Int64] { _ = buffer.add(Self.alert(at), lease: "bn", at: at) }
        _ = buffer.add(Self.alert(0), lease: "kr", at: 0)
        // bn's leader saved at 100 s: what was made 30 s before it or later is kept; kr has no save.
        buffer.trim(marks: ["bn": 100_000], now: 100_000)
        #expect(buffer.events["bn"]?.map(\.at) == [70_000, 100_000])
        #expect(buffer.events["kr"]?.count == 1)
        // An hour later nothing older than an hour is kept, save or not.
        buffer.trim(marks: [:], now: 3_600_000 + 80_000)
        #expect(buffer.events["bn"]?.map(\.at) == [100_000])
        #expect(buffer.events["kr"]?.isEmpty == true)
    }

    @Test func aFullBufferDropsTheOldestAndSaysSoOnce() {
        var buffer = StandbyBuffer()
        buffer.limit = 3
        let overflows = (0..<5).map { buffer.add(Self.alert(Int64($0)), lease: "bn", at: Int64($0)) }
        #expect(overflows == [false, false, false, true, false])
        #expect(buffer.events["bn"]?.map(\.alert.time) == [2, 3, 4])
    }

    @Test func aTakeoverTakesTheLeasesEventsInOrderAndItsSymbolsState() {
        var buffer = StandbyBuffer()
        let leases = SourceLeases(home: "binance", sources: ["kr"]) { _ in nil }
        _ = buffer.add(Self.alert(1), lease: "binance", at: 1)
        _ = buffer.add(Self.alert(2, source: "kr"), lease: "kr", at: 2)
        _ = buffer.add(Self.alert(3), lease: "binance", at: 3)
        for key in ["BTC", "kr:BTC", "@BASKET"] { buffer.state[key] = SymbolSnapshot(symbol: key) }
        let (events, state) = buffer.take("binance", leaseOfKey: leases.lease(ofKey:))
        #expect(events.map(\.time) == [1, 3])
        #expect(Set(state.map(\.symbol)) == ["BTC", "@BASKET"])
        #expect(buffer.events["binance"] == nil && buffer.state.keys.sorted() == ["kr:BTC"])
    }

    @Test func eachKeyAndEventBelongsToOneLease() {
        let leases = SourceLeases(home: "binance", sources: ["kr", "binance"]) { $0 == "kr" ? 4 : nil }
        #expect(leases.lease(ofKey: "kr:ETH/USD") == "kr")
        #expect(leases.lease(ofKey: "BTC/USDT") == "binance")
        #expect(leases.lease(ofKey: "@BASKET") == "binance")
        // A v1 symbol with a colon whose prefix is no source of the rule files.
        #expect(leases.lease(ofKey: "FOO:BAR") == "binance")
        #expect(leases.lease(ofSource: "kr") == "kr" && leases.lease(ofSource: nil) == "binance")
        #expect(leases.lease(ofSource: "added-by-sighup") == "binance")
        #expect(leases.all == ["binance", "kr"])
        #expect(leases.epoch(of: "kr") == 4 && leases.epoch(of: "binance") == nil)
    }
}

/// Events the store dropped because another instance leads their lease, handed back to the
/// evaluator (`LiveEvaluation.refused`): an instance paused past its lease evaluated them as
/// its leader before it heard that it had lost it, so no standby but its own holds them.
@Suite("events refused under another instance's lease")
struct RefusedEventsTests {
    /// An evaluation of a run on a shared store whose home lease is `binance`, and what it hands
    /// to delivery; `mark(n)` puts a marker in that stream between steps.
    struct Run {
        var evaluation: LiveEvaluation
        let delivery: AsyncStream<DeliveryInput>.Continuation
        let handed: AsyncStream<DeliveryInput>

        init() throws {
            let rules = try EvaluatorTests.rules(EvaluatorTests.above100)
            (handed, delivery) = AsyncStream.makeStream(of: DeliveryInput.self)
            let logger = Logger(label: "refused-events-test")
            let ids = rules.rules.map(\.id)
            let monitor = PipelineMonitor(
                rules: ids, notifier: ServiceNotifier(environment: [:]),
                metrics: PipelineMetrics(rules: ids, factory: PrometheusMetrics.isolated().factory), logger: logger)
            evaluation = LiveEvaluation(
                ruleSet: rules, logger: logger, monitor: monitor, output: delivery, gate: AlertGate(limit: 100))
            evaluation.leases = SourceLeases(home: "binance", sources: []) { _ in nil }
        }

        func mark(_ step: Int64) { delivery.yield(.wallClock(step)) }

        /// What was handed on, in order: an event by its time, a marker as `-step`.
        func handedOn() async -> [Int64] {
            delivery.finish()
            var seen: [Int64] = []
            for await input in handed {
                switch input {
                case .alert(let alert): seen.append(alert.time)
                case .wallClock(let step): seen.append(-step)
                default: break
                }
            }
            return seen
        }
    }

    static func refused(_ times: [Int64], leaderEpoch: Int64?) -> RefusedEvents {
        RefusedEvents(alerts: times.map { StandbyBufferTests.alert($0) }, leaderEpoch: leaderEpoch)
    }

    @Test func refusedWhileItStillCountsItselfTheLeaderTheyWaitForItsNextTakeover() async throws {
        var run = try Run()
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: 1))
        // b took binance over in epoch 2 while this instance was paused.
        await run.evaluation.refused(Self.refused([10, 11], leaderEpoch: 2))
        run.mark(1)
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: nil))
        run.mark(2)
        // b hands binance back (this instance has followed it longer): epoch 3.
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: 3))
        run.mark(3)
        #expect(await run.handedOn() == [-1, -2, 10, 11, -3])
    }

    @Test func aLeaseLostAndTakenBackWithNoStandbyBetweenEntersWhatWasRefused() async throws {
        var run = try Run()
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: 1))
        await run.evaluation.refused(Self.refused([10], leaderEpoch: 2))
        run.mark(1)
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: 3))
        run.mark(2)
        // The same epoch again is no takeover: nothing is entered twice.
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: 3))
        run.mark(3)
        #expect(await run.handedOn() == [-1, 10, -2, -3])
    }

    @Test func refusedUnderAnEpochBeforeTheOneItLeadsTheyAreHandedOnAtOnce() async throws {
        var run = try Run()
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: 3))
        // Refused under b's epoch 2, handed back after this instance took binance in epoch 3.
        await run.evaluation.refused(Self.refused([10], leaderEpoch: 2))
        run.mark(1)
        // Refused under an epoch after its own: it lost binance again, so they wait.
        await run.evaluation.refused(Self.refused([20], leaderEpoch: 4))
        run.mark(2)
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: nil))
        await run.evaluation.roleChanged(RoleChange(lease: "binance", epoch: 5))
        run.mark(3)
        #expect(await run.handedOn() == [10, -1, -2, 20, -3])
    }
}

import AlertModel
import SeededRandom
import Testing

@testable import AlertPolicy

@Suite struct GrouperTests {
    /// The digests Docs/sinks.md#groups-and-digests describes for `events` (in time order),
    /// read naively: per key, a digest starts at an event and takes the following events of
    /// its key until one is `window` or more after the first, or it holds `max`.
    static func expectedDigests(_ events: [Alert], window: Int64, max: Int, key: (Alert) -> String) -> Set<[String]> {
        var result: Set<[String]> = []
        for group in Dictionary(grouping: events, by: key).values {
            var index = 0
            while index < group.count {
                let start = group[index].time
                var members: [String] = []
                while index < group.count, group[index].time < start + window, members.count < max {
                    members.append(group[index].id)
                    index += 1
                }
                result.insert(members)
            }
        }
        return result
    }

    @Test(arguments: [[GroupField](), [.rule], [.rule, .symbol]])
    func digestMembershipMatchesTheRules(by: [GroupField]) {
        var random = SeededRandom(seed: 15)
        var time: Int64 = 1_700_000_000_000
        var events: [Alert] = []
        for _ in 0..<400 {
            time += Int64(random.next() % 20_000)
            events.append(alert("r\(random.next() % 4)", ["BTC-USD", "ETH-USD"][Int(random.next() % 2)], at: time))
        }
        let spec = GroupSpec(window: minute, by: by, max: 7)
        var grouper = Grouper(sink: "chat", spec: spec)
        var out: [Delivery] = []
        for event in events { out += grouper.add(event) }
        out += grouper.finish()
        let expected = Self.expectedDigests(events, window: spec.window, max: spec.max, key: grouper.key)
        #expect(Set(ids(out)) == expected)
        #expect(out.count == expected.count)
        for delivery in out {
            if case .digest(let digest) = delivery {
                #expect(digest.events.count >= 2)
                #expect(digest.id == "digest:chat:\(digest.events[0].id)")
            }
        }
    }

    @Test func aDigestClosesAtTheFirstLaterEventOfItsKeyWhenFullOrByTheWallClock() {
        var grouper = Grouper(sink: "chat", spec: GroupSpec(window: minute, by: [.rule], max: 3))
        #expect(grouper.add(alert("a", at: 0)).isEmpty)
        #expect(grouper.add(alert("b", at: 10 * second)).isEmpty)
        #expect(grouper.add(alert("a", at: 59 * second)).isEmpty)
        // `a` at t0 + 60 s closes a's digest and opens the next.
        #expect(ids(grouper.add(alert("a", at: minute))) == [["a:BTC-USD:0", "a:BTC-USD:59000"]])
        #expect(grouper.add(alert("a", at: minute + 1)).isEmpty)
        // Full at 3.
        #expect(
            ids(grouper.add(alert("a", at: minute + 2))) == [["a:BTC-USD:60000", "a:BTC-USD:60001", "a:BTC-USD:60002"]])
        // b's digest (t0 = 10 s) closes when the wall clock passes 70 s, not before.
        #expect(grouper.close(wallTime: 70 * second - 1).isEmpty)
        let closed = grouper.close(wallTime: 70 * second)
        #expect(closed == [.event(alert("b", at: 10 * second))])
        #expect(grouper.openEvents == 0)
    }

    @Test func aReplayGivesTheSameDeliveriesEveryTime() throws {
        let sink = SinkDefinition(
            name: "chat", kind: .stdout(format: .json),
            policy: SinkPolicy(
                quiet: [QuietWindowSpec(from: 22 * 60, to: 7 * 60)],
                group: GroupSpec(window: 5 * minute, by: [.symbol])))
        func run() throws -> [PolicyDecision] {
            var pipeline = try PolicyPipeline(sinks: [sink])
            var decisions: [PolicyDecision] = []
            for index in 0..<300 {
                let event = alert(
                    "r\(index % 7)", ["BTC-USD", "ETH-USD", "SOL-USD"][index % 3], at: Int64(index) * 17 * minute)
                decisions += pipeline.receive(PolicyEvent(alert: event))
            }
            return decisions + pipeline.finish()
        }
        let first = try run()
        #expect(try run() == first)
        let delivered = deliveries(first).flatMap(\.events).map(\.id)
        #expect(delivered.count == 300 && Set(delivered).count == 300, "every event is delivered once")
    }
}

@Suite struct PipelineTests {
    static let grouped = SinkDefinition(
        name: "chat", kind: .stdout(format: .json),
        policy: SinkPolicy(
            quiet: [QuietWindowSpec(from: 22 * 60, to: 7 * 60)],
            group: GroupSpec(window: minute)))

    @Test func aSilencedEventGoesToNoSink() throws {
        var pipeline = try PolicyPipeline(
            sinks: [Self.grouped],
            silences: SilenceSet([Silence(id: "s1", rule: try Glob("btc-*"), from: 0, until: 10 * minute)]))
        let silenced = alert("btc-1", at: 5 * minute, sinks: ["chat", "stdout"])
        #expect(pipeline.receive(PolicyEvent(alert: silenced)) == [.silenced(eventID: silenced.id, silence: "s1")])
        let after = alert("btc-1", at: 10 * minute, sinks: ["stdout"])
        #expect(pipeline.receive(PolicyEvent(alert: after)) == [.deliver(sink: "stdout", .event(after), urgent: false)])
        #expect(pipeline.finish().isEmpty)
    }

    @Test func highPriorityEventsSkipQuietHoursAndGroups() throws {
        var pipeline = try PolicyPipeline(sinks: [Self.grouped])
        let night = utc("2026-11-20T23:00:00.000Z")
        let normal = alert("a", at: night)
        let high = alert("b", at: night + second)
        #expect(pipeline.receive(PolicyEvent(alert: normal)) == [.held(sink: "chat", eventID: normal.id)])
        #expect(
            pipeline.receive(PolicyEvent(alert: high, highPriority: true)) == [
                .deliver(sink: "chat", .event(high), urgent: true)
            ])
        let day = utc("2026-11-21T12:00:00.000Z")
        let first = alert("c", at: day), urgent = alert("d", at: day + 1)
        // The day's first event ends the night: the held event leaves first (alone, so plain).
        #expect(pipeline.receive(PolicyEvent(alert: first)) == [.deliver(sink: "chat", .event(normal), urgent: false)])
        #expect(
            pipeline.receive(PolicyEvent(alert: urgent, highPriority: true)) == [
                .deliver(sink: "chat", .event(urgent), urgent: true)
            ])
        #expect(ids(deliveries(pipeline.finish())) == [[first.id]])
    }
}

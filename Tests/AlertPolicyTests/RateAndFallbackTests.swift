import AlertModel
import SeededRandom
import Testing

@testable import AlertPolicy

@Suite struct RateLimitTests {
    @Test func atMostCountStartsInAnyIntervalOfPer() {
        var random = SeededRandom(seed: 7)
        let spec = RateSpec(count: 3, per: 1_000)
        var limit = RateLimit(spec)
        var now: Int64 = 0
        var starts: [Int64] = []
        for _ in 0..<500 {
            now += Int64(random.next() % 400)
            if limit.allows(now: now) {
                limit.record(now)
                starts.append(now)
            } else {
                #expect(limit.nextStart(now: now) > now)
            }
        }
        #expect(starts.count > 100)
        // Any interval [t, t + per) holds at most `count` starts; the tightest start at a start.
        for (index, start) in starts.enumerated() {
            #expect(starts[index...].prefix { $0 < start + spec.per }.count <= spec.count)
        }
    }

    @Test func theNextStartIsWhenTheOldestOfTheLastCountLeavesTheWindow() {
        var limit = RateLimit(RateSpec(count: 2, per: 1_000))
        limit.record(100)
        limit.record(400)
        #expect(limit.nextStart(now: 500) == 1_100)
        #expect(limit.allows(now: 1_100))
        limit.record(1_100)
        #expect(limit.nextStart(now: 1_100) == 1_400)
    }

    /// An attempt that took a while counts from when it ended: the receiver saw it after it left.
    @Test func anEndedAttemptCountsFromItsEnd() {
        var limit = RateLimit(RateSpec(count: 1, per: 1_000))
        limit.record(100)
        limit.settle(started: 100, now: 350)
        #expect(limit.nextStart(now: 500) == 1_350)
        limit.settle(started: 99, now: 900) // not a start it holds: nothing changes
        #expect(limit.nextStart(now: 500) == 1_350)
    }

    /// An attempt in flight holds its place until it ends: with `count` in flight nothing more
    /// starts, however long ago they left, and the next start counts from the end.
    @Test func anAttemptInFlightHoldsItsPlaceUntilItEnds() {
        var limit = RateLimit(RateSpec(count: 2, per: 1_000))
        limit.begin(100)
        #expect(limit.nextStart(now: 100) == 100)
        limit.begin(200)
        #expect(limit.nextStart(now: 5_000) == .max)
        limit.settle(started: 100, now: 700)
        #expect(limit.nextStart(now: 800) == 1_700)
        limit.begin(1_700)
        #expect(limit.nextStart(now: 1_700) == .max) // 200 still in flight
        limit.settle(started: 200, now: 300)
        #expect(limit.nextStart(now: 1_700) == 1_700) // the last two: 700 (ended) and 1 700
        limit.settle(started: 1_700, now: 1_750)
        limit.begin(1_750)
        #expect(limit.nextStart(now: 1_800) == 2_750)
    }

    /// The crash minute: 500 events wait for a sink that takes one message a second; backlog
    /// batching sends them all in 5 digests of 100 (group.max's default) in 5 seconds, in order.
    @Test func aBacklogLeavesAsDigestsOfUpToBatchMax() {
        var pacer = SinkPacer(sink: "chat", rate: RateSpec(count: 1, per: second))
        let events = (0..<500).map { alert("r\($0 % 50)", at: Int64($0) * 100) }
        for event in events { pacer.enqueue(.event(event)) }
        var now: Int64 = 1_000_000
        var sent: [(Int64, Delivery)] = []
        while let start = pacer.nextStart(now: now) {
            now = start
            if let delivery = pacer.next(now: now) { sent.append((now, delivery)) }
        }
        #expect(sent.map(\.0) == (0..<5).map { 1_000_000 + $0 * second })
        #expect(sent.flatMap { $0.1.events.map(\.id) } == events.map(\.id))
        #expect(sent.allSatisfy { $0.1.events.count == 100 })
        #expect(sent[0].1.id == "digest:chat:\(events[0].id)")
    }

    @Test func aSmallQueueGoesOneByOneAndUrgentOnesFirst() {
        var pacer = SinkPacer(sink: "chat", rate: RateSpec(count: 2, per: second), batchMax: 10)
        let a = alert("a", at: 1), b = alert("b", at: 2), urgent = alert("u", at: 3)
        pacer.enqueue(.event(a))
        pacer.enqueue(.event(b))
        pacer.enqueue(.event(urgent), urgent: true)
        // The urgent one leaves first; then two wait, not more than the count of 2, so they
        // leave one by one as the rate allows.
        #expect(pacer.next(now: 0) == .event(urgent))
        #expect(pacer.next(now: 0) == .event(a))
        #expect(pacer.next(now: 0) == nil)
        #expect(pacer.nextStart(now: 0) == second)
        #expect(pacer.next(now: second) == .event(b))
        #expect(pacer.nextStart(now: second) == nil)
    }

    @Test func withoutARateEverythingStartsAtOnce() {
        var pacer = SinkPacer(sink: "file", rate: nil)
        for index in 0..<5 { pacer.enqueue(.event(alert("r", at: Int64(index)))) }
        var count = 0
        while pacer.next(now: 0) != nil { count += 1 }
        #expect(count == 5)
    }

    @Test func presetsDefaultToThePlatformsLimits() {
        let telegram = SinkDefinition(
            name: "tg", kind: .webhook(WebhookSpec(url: .environment("TG"), preset: "telegram")))
        #expect(PresetRates.effectiveRate(of: telegram) == RateSpec(count: 1, per: 1_000))
        var own = telegram
        own.policy.rate = RateSpec(count: 5, per: 60_000)
        #expect(PresetRates.effectiveRate(of: own) == RateSpec(count: 5, per: 60_000))
        let json = SinkDefinition(name: "hook", kind: .webhook(WebhookSpec(url: .environment("H"))))
        #expect(PresetRates.effectiveRate(of: json) == nil)
    }
}

@Suite struct FallbackTests {
    static let routes = FallbackRoutes(["chat": "mail", "mail": "pager"])
    static let hour: Int64 = 3_600_000

    @Test func aPermanentErrorGoesToTheFallbackAtOnce() {
        #expect(
            Self.routes.decide(sink: "chat", failure: .permanent, createdAt: 0, now: 1, maxAge: Self.hour)
                == .fallback("mail"))
    }

    @Test func aTemporaryErrorIsRetriedUntilMaxAgeThenFallsBack() {
        #expect(
            Self.routes.decide(sink: "chat", failure: .temporary, createdAt: 0, now: Self.hour - 1, maxAge: Self.hour)
                == .retry)
        #expect(
            Self.routes.decide(sink: "chat", failure: .temporary, createdAt: 0, now: Self.hour, maxAge: Self.hour)
                == .fallback("mail"))
    }

    @Test func theFallbacksFallbackIsFollowedAndTheEndDeadLetters() {
        #expect(
            Self.routes.decide(sink: "mail", failure: .permanent, createdAt: 0, now: 0, maxAge: Self.hour)
                == .fallback("pager"))
        #expect(
            Self.routes.decide(sink: "pager", failure: .permanent, createdAt: 0, now: 0, maxAge: Self.hour)
                == .deadLetter)
    }

    @Test func cyclesAreFound() {
        #expect(FallbackRoutes.cycle(in: ["a": "b", "b": "c"]) == nil)
        #expect(FallbackRoutes.cycle(in: ["a": "a"]) == ["a", "a"])
        #expect(FallbackRoutes.cycle(in: ["a": "b", "b": "a"]) == ["a", "b", "a"])
        #expect(FallbackRoutes.cycle(in: ["a": "b", "b": "c", "c": "b"]) == ["b", "c", "b"])
    }
}

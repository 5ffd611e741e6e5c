import AlertHTTP
import AlertModel
import AlertPolicy
import AlertTestSupport
import Foundation
import Testing

@testable import AlertOutbox
@testable import AlertSinks
@testable import AlertStore

/// The rate, backlog-batching, urgent and fallback stages of the sink workers, measured at a
/// real loopback receiver through the real webhook sink and a real outbox file. Where a test is
/// about time, the dispatcher runs on a `ManualClock` the test drives (`run`), and the times are
/// those of the attempts' starts on it.
@Suite struct PacingTests {
    /// A webhook sink definition posting to `path` on the receiver.
    static func webhook(
        _ name: String, _ port: Int, _ path: String, rate: RateSpec? = nil, groupMax: Int? = nil,
        fallback: String? = nil, maxAge: Int64? = nil
    ) -> SinkDefinition {
        SinkDefinition(
            name: name, kind: .webhook(WebhookSpec(url: .inline("http://127.0.0.1:\(port)\(path)"))),
            delivery: DeliverySettings(backoff: 5, maxBackoff: 20, maxAge: maxAge),
            policy: SinkPolicy(
                group: groupMax.map { GroupSpec(window: 60_000, max: $0) }, rate: rate,
                fallback: fallback))
    }

    /// A dispatcher for `definitions` (webhook and exec ones durable) on `store`, not started;
    /// with `clock`, it runs on that clock and the sink named `stamped` records its attempts' starts.
    static func dispatcher(
        _ definitions: [SinkDefinition], _ store: StateStore, client: CurlHTTPClient,
        clock: ManualClock? = nil, stamped: StampedSink? = nil
    ) throws -> ReliableDispatcher {
        var sinks = try SinkFactory.makeAll(
            definitions, dependencies: .init(httpClient: client, environment: { _ in nil }))
        if let stamped { sinks[stamped.name] = stamped }
        let durable = Set(definitions.filter(\.kind.isDurable).map(\.name))
        var configuration = ReliableDispatcher.Configuration(definitions: definitions)
        configuration.pollInterval = 10
        return ReliableDispatcher(
            sinks: sinks, durable: durable, outbox: store.outbox, configuration: configuration,
            intervals: clock ?? ContinuousClock())
    }

    /// The `definition`'s sink, recording its attempts' starts on `clock`.
    static func stamped(_ definition: SinkDefinition, client: CurlHTTPClient, clock: ManualClock) throws -> StampedSink
    {
        StampedSink(
            try SinkFactory.make(definition, dependencies: .init(httpClient: client, environment: { _ in nil })),
            clock: clock)
    }

    static func events(_ count: Int, rule: (Int) -> String = { "r\($0 % 7)" }, notify: [String] = ["chat"]) -> [Alert] {
        (1...count).map { sampleAlert(rule($0), time: Int64($0), notify: notify) }
    }

    /// The event ids a request carried: a digest's events, or the one event.
    static func ids(_ request: Receiver.Request) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        if object["kind"] as? String == "digest" {
            return try #require(object["events"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        }
        return [try #require(object["id"] as? String)]
    }

    /// 500 events waiting for a sink paced at one request per 250 ms: 5 digests of 100, from the
    /// front, every event exactly once and in order, ids `digest:SINK:<first event id>`, and no
    /// two attempts starting within 250 ms of each other.
    @Test func aBacklogLeavesAsDigestsAtTheRate() async throws {
        let store = try openStore()
        defer { store.close() }
        let events = Self.events(500)
        let clock = ManualClock()
        let (requests, starts) = try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let definition = Self.webhook("chat", port, "/hook/chat", rate: RateSpec(count: 1, per: 250))
            let chat = try Self.stamped(definition, client: client, clock: clock)
            let dispatcher = try Self.dispatcher([definition], store, client: client, clock: clock, stamped: chat)
            for event in events { await dispatcher.dispatch(event) }
            try await dispatcher.commit()
            try await dispatcher.start()
            #expect(await run(clock) { receiver.requests.count >= 5 && (try? store.outbox.depth()) == 0 })
            #expect(await dispatcher.drain(timeout: .seconds(30)))
            return (receiver.requests, chat.starts)
        }
        #expect(requests.count == 5)
        let carried = try requests.map(Self.ids)
        #expect(carried.map(\.count) == [100, 100, 100, 100, 100])
        #expect(carried.flatMap { $0 } == events.map(\.id))
        #expect(requests.map { $0.headers["webhook-id"] } == carried.map { "digest:chat:" + $0[0] })
        #expect(starts.count == 5)
        for (earlier, later) in zip(starts, starts.dropFirst()) {
            #expect(earlier.duration(to: later) >= .milliseconds(250))
        }
        #expect(try store.outbox.storedAlerts() == 0)
    }

    /// No more than `count` requests start in any `per`, with batches kept small (`group.max` 2).
    @Test func noMoreThanCountStartInAnyPer() async throws {
        let store = try openStore()
        defer { store.close() }
        let clock = ManualClock()
        let (requests, starts) = try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let definition = Self.webhook("chat", port, "/hook/chat", rate: RateSpec(count: 2, per: 400), groupMax: 2)
            let chat = try Self.stamped(definition, client: client, clock: clock)
            let dispatcher = try Self.dispatcher([definition], store, client: client, clock: clock, stamped: chat)
            try await dispatcher.start()
            for event in Self.events(16) { await dispatcher.dispatch(event) }
            try await dispatcher.commit()
            #expect(
                await run(clock) {
                    (try? receiver.requests.flatMap(Self.ids).count) == 16 && (try? store.outbox.depth()) == 0
                })
            await dispatcher.drain(timeout: .seconds(30))
            return (receiver.requests, chat.starts)
        }
        #expect(try requests.flatMap(Self.ids).sorted() == Self.events(16).map(\.id).sorted())
        #expect(requests.count >= 8 && starts.count == requests.count)
        for (earlier, later) in zip(starts, starts.dropFirst(2)) {
            #expect(earlier.duration(to: later) >= .milliseconds(400))
        }
    }

    /// An urgent event waiting behind others leaves first, alone.
    @Test func urgentLeavesFirstAndAlone() async throws {
        let store = try openStore()
        defer { store.close() }
        let normal = Self.events(10)
        let urgent = sampleAlert("wake-up", time: 99, notify: ["chat"])
        let requests = try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let dispatcher = try Self.dispatcher(
                [Self.webhook("chat", port, "/hook/chat", rate: RateSpec(count: 1, per: 50))],
                store, client: client)
            for event in normal { await dispatcher.dispatch(event) }
            await dispatcher.dispatch(.event(urgent), to: ["chat"], urgent: true)
            try await dispatcher.commit()
            try await dispatcher.start()
            #expect(await eventually { receiver.requests.count >= 2 })
            await dispatcher.drain(timeout: .seconds(30))
            return receiver.requests
        }
        #expect(try requests.map(Self.ids) == [[urgent.id], normal.map(\.id)])
        #expect(requests.first?.headers["webhook-id"] == urgent.id)
    }

    /// A batch that fails is retried as the same digest (same id, same events), and a restart
    /// over the same rows batches them with the same id again.
    @Test func aRetriedOrRestartedBatchKeepsItsID() async throws {
        let folder = StateFolder(path: try temporaryFolder() + "/state")
        let events = Self.events(10)
        let requests = try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let sink = Self.webhook("chat", port, "/flaky/1/chat", rate: RateSpec(count: 1, per: 20))
            let store = try openStore(folder)
            let first = try Self.dispatcher([sink], store, client: client)
            for event in events { await first.dispatch(event) }
            try await first.commit()
            try await first.start()
            #expect(await eventually { receiver.requests.count >= 2 && (try? store.outbox.depth()) == 0 })
            await first.drain(timeout: .seconds(30))
            store.close()
            // The same rows again, as after a crash before "delivered" was written.
            let again = try openStore(folder)
            defer { again.close() }
            let second = try Self.dispatcher([sink], again, client: client)
            for event in events { await second.dispatch(event) }
            try await second.commit()
            try await second.start()
            #expect(await eventually { receiver.requests.count >= 3 })
            await second.drain(timeout: .seconds(30))
            return receiver.requests
        }
        #expect(requests.count == 3)
        #expect(Set(requests.map { $0.headers["webhook-id"] }) == ["digest:chat:" + events[0].id])
        #expect(try requests.map(Self.ids) == Array(repeating: events.map(\.id), count: 3))
    }

    /// A batch refused with `Retry-After: 1` is tried again no sooner than a second later, as
    /// the same digest.
    @Test func aBatchHonoursRetryAfter() async throws {
        let store = try openStore()
        defer { store.close() }
        let events = Self.events(10)
        let clock = ManualClock()
        let (requests, starts) = try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let definition = Self.webhook(
                "chat", port, "/flaky/1/chat?retry-after=1", rate: RateSpec(count: 1, per: 20))
            let chat = try Self.stamped(definition, client: client, clock: clock)
            let dispatcher = try Self.dispatcher([definition], store, client: client, clock: clock, stamped: chat)
            for event in events { await dispatcher.dispatch(event) }
            try await dispatcher.commit()
            try await dispatcher.start()
            #expect(await run(clock) { receiver.requests.count >= 2 && (try? store.outbox.depth()) == 0 })
            await dispatcher.drain(timeout: .seconds(30))
            return (receiver.requests, chat.starts)
        }
        #expect(requests.count == 2)
        #expect(try requests.map(Self.ids) == [events.map(\.id), events.map(\.id)])
        #expect(requests.map { $0.headers["webhook-id"] } == Array(repeating: "digest:chat:" + events[0].id, count: 2))
        #expect(starts.count == 2)
        if starts.count == 2 {
            #expect(starts[0].duration(to: starts[1]) >= .milliseconds(1_000))
        }
    }

    /// HTTP 410 is permanent: a dead letter on the sink, and the same delivery (same id) is put
    /// in the outbox for its fallback and delivered there.
    @Test func aGoneSinkFallsBackWithTheSameID() async throws {
        let store = try openStore()
        defer { store.close() }
        let event = sampleAlert("a", time: 1, notify: ["chat"])
        let requests = try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let dispatcher = try Self.dispatcher(
                [
                    Self.webhook("chat", port, "/status/410", fallback: "mail"),
                    Self.webhook("mail", port, "/hook/mail")
                ], store, client: client)
            try await dispatcher.start()
            await dispatcher.dispatch(event)
            #expect(await eventually { receiver.requests.contains { $0.path == "/hook/mail" } })
            await dispatcher.drain(timeout: .seconds(30))
            return receiver.requests
        }
        #expect(requests.map(\.path) == ["/status/410", "/hook/mail"])
        #expect(requests.map { $0.headers["webhook-id"] } == [event.id, event.id])
        let dead = try store.outbox.dead()
        #expect(dead.map(\.sink) == ["chat"] && dead.map(\.deliveryID) == [event.id])
        #expect(dead.first?.deadReason?.contains("410") == true)
        #expect(try store.outbox.depth() == 0)
    }

    /// Still failing at `retry.maxAge`: a dead letter, handed to the fallback — here a file sink,
    /// written directly.
    @Test func aSinkFailingPastMaxAgeFallsBackToAFile() async throws {
        let store = try openStore()
        defer { store.close() }
        let path = try temporaryFolder() + "/undelivered.jsonl"
        let event = sampleAlert("a", time: 1, notify: ["chat"])
        let attempts = try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let dispatcher = try Self.dispatcher(
                [
                    Self.webhook("chat", port, "/status/503", fallback: "journal", maxAge: 200),
                    SinkDefinition(name: "journal", kind: .file(path: path))
                ], store, client: client)
            try await dispatcher.start()
            await dispatcher.dispatch(event)
            #expect(await eventually { (try? String(contentsOfFile: path, encoding: .utf8))?.isEmpty == false })
            await dispatcher.drain(timeout: .seconds(30))
            return receiver.requests.count
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == AlertFormat.json(event) + "\n")
        let dead = try store.outbox.dead()
        #expect(dead.map(\.sink) == ["chat"])
        // Retried as a temporary failure until maxAge (how many attempts fit depends on the load):
        // the reason counts every attempt the receiver saw.
        let plural = attempts == 1 ? "attempt" : "attempts"
        #expect(dead.first?.deadReason?.hasPrefix("gave up after \(attempts) \(plural) over") == true)
    }

    /// `drain` returns only once every dead letter is with its fallback: a file fallback has
    /// every refused event when it returns, without waiting for the file first.
    @Test func drainWaitsForDeadLettersToReachAFileFallback() async throws {
        let store = try openStore()
        defer { store.close() }
        let path = try temporaryFolder() + "/undelivered.jsonl"
        let events = Self.events(40)
        try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let dispatcher = try Self.dispatcher(
                [
                    Self.webhook("chat", port, "/status/410", fallback: "journal"),
                    SinkDefinition(name: "journal", kind: .file(path: path))
                ], store, client: client)
            try await dispatcher.start()
            for event in events { await dispatcher.dispatch(event) }
            #expect(await dispatcher.drain(timeout: .seconds(60)))
        }
        let journal = try String(contentsOfFile: path, encoding: .utf8)
        #expect(journal.split(separator: "\n").count == events.count)
        for event in events { #expect(journal.contains(#""id":"\#(event.id)""#)) }
        #expect(try store.outbox.dead().count == events.count)
    }

    /// A fallback that fails too dead-letters as usual: one dead letter on each sink.
    @Test func aFailingFallbackDeadLetters() async throws {
        let store = try openStore()
        defer { store.close() }
        let event = sampleAlert("a", time: 1, notify: ["chat"])
        try await Receiver.with { receiver, port in
            let client = CurlHTTPClient()
            defer { client.shutdown() }
            let dispatcher = try Self.dispatcher(
                [
                    Self.webhook("chat", port, "/status/410", fallback: "mail"),
                    Self.webhook("mail", port, "/status/404")
                ], store, client: client)
            try await dispatcher.start()
            await dispatcher.dispatch(event)
            #expect(await eventually { (try? store.outbox.dead().count) == 2 })
            await dispatcher.drain(timeout: .seconds(30))
        }
        let dead = try store.outbox.dead()
        #expect(dead.map(\.sink) == ["chat", "mail"] && dead.map(\.deliveryID) == [event.id, event.id])
        #expect(try store.outbox.depth() == 0)
    }
}

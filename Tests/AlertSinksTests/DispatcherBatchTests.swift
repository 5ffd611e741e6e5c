import AlertModel
import AlertPolicy
import AlertSinksTesting
import AlertTestSupport
import Synchronization
import Testing

@testable import AlertSinks

/// `Dispatcher.dispatch(_ alerts:)`: each sink is handed the events meant for it as one batch.
@Suite struct DispatcherBatchTests {
    /// Records how many deliveries each `send` call brought.
    final class BatchRecordingSink: Sink {
        let name: String
        let calls = Mutex<[[Delivery]]>([])

        init(name: String) {
            self.name = name
        }

        func send(_ alert: Alert) async -> SinkResult {
            calls.withLock { $0.append([.event(alert)]) }
            return .delivered
        }

        func send(_ deliveries: [Delivery]) async -> [SinkResult] {
            calls.withLock { $0.append(deliveries) }
            return Array(repeating: .delivered, count: deliveries.count)
        }
    }

    @Test func eachSinkTakesItsEventsTogetherInOrder() async {
        let a = BatchRecordingSink(name: "a")
        let broken = InMemorySink(name: "broken", failure: .retry(reason: "disk full", after: nil))
        let c = InMemorySink(name: "c")
        let capture = CapturingLogHandler()
        let dispatcher = Dispatcher(
            sinks: ["a": a, "broken": broken, "c": c], logger: capture.logger(label: "pricealert.dispatch"))
        let alerts = [
            sampleAlert(time: 1, notify: ["c", "a"]),
            sampleAlert(time: 2, notify: ["broken", "a", "ghost"]),
            sampleAlert(time: 3, notify: []),
            sampleAlert(time: 4, notify: ["a", "c", "hook"])
        ]

        let failed = await dispatcher.dispatch(alerts, skipping: ["hook"])
        #expect(failed == 2)
        #expect(a.calls.withLock { $0 } == [[.event(alerts[0]), .event(alerts[1]), .event(alerts[3])]])
        #expect(c.alerts.map(\.time) == [1, 4])
        #expect(broken.attempts == 1 && broken.alerts.isEmpty)
        #expect(
            await dispatcher.counts == [
                "a": .init(delivered: 3, failed: 0),
                "c": .init(delivered: 2, failed: 0),
                "broken": .init(delivered: 0, failed: 1),
                "ghost": .init(delivered: 0, failed: 1)
            ])
        #expect(
            capture.records.map(\.message) == [
                "sink 'broken' failed to deliver btc-100k:BTC:2: disk full",
                "sink 'ghost' failed to deliver btc-100k:BTC:2: unknown sink"
            ])
    }

    /// A file sink on a full device: every event of the batch is reported failed, logged by id.
    @Test func aFileSinkThatCannotWriteFailsEachEvent() async throws {
        let capture = CapturingLogHandler()
        let dispatcher = Dispatcher(
            sinks: ["journal": try FileSink(name: "journal", path: "/dev/full")],
            logger: capture.logger(label: "pricealert.dispatch"))
        let alerts = (1...5).map { sampleAlert(time: Int64($0), notify: ["journal"]) }
        #expect(await dispatcher.dispatch(alerts) == 5)
        #expect(await dispatcher.counts == ["journal": .init(delivered: 0, failed: 5)])
        #expect(
            capture.records.map(\.message)
                == (1...5).map {
                    "sink 'journal' failed to deliver btc-100k:BTC:\($0): cannot write /dev/full: No space left on device"
                })
    }
}

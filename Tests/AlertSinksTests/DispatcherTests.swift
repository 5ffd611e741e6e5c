import AlertModel
import AlertSinksTesting
import AlertTestSupport
import Logging
import Testing

@testable import AlertSinks

@Suite struct DispatcherTests {
    @Test func fansOutInOrderAndContinuesPastFailures() async {
        let a = InMemorySink(name: "a")
        let broken = InMemorySink(name: "broken", failure: .retry(reason: "disk full", after: nil))
        let c = InMemorySink(name: "c")
        let dispatcher = Dispatcher(sinks: ["a": a, "broken": broken, "c": c])

        let first = sampleAlert(time: 1, notify: ["c", "broken", "a"])
        let results = await dispatcher.dispatch(first)
        #expect(results.map(\.sink) == ["c", "broken", "a"])
        #expect(results.map(\.result) == [.delivered, .retry(reason: "disk full", after: nil), .delivered])

        await dispatcher.dispatch(sampleAlert(time: 2, notify: ["a", "ghost", "broken"]))
        await dispatcher.dispatch(sampleAlert(time: 3, notify: []))

        #expect(a.alerts.map(\.time) == [1, 2])
        #expect(c.alerts.map(\.time) == [1])
        #expect(broken.alerts.isEmpty)
        #expect(broken.attempts == 2)
        let counts = await dispatcher.counts
        #expect(
            counts == [
                "a": .init(delivered: 2, failed: 0),
                "c": .init(delivered: 1, failed: 0),
                "broken": .init(delivered: 0, failed: 2),
                "ghost": .init(delivered: 0, failed: 1)
            ])
    }

    @Test func failuresAreLoggedWithSinkAndReason() async {
        let capture = CapturingLogHandler()
        let dispatcher = Dispatcher(
            sinks: ["broken": InMemorySink(name: "broken", failure: .permanent(reason: "HTTP 404"))],
            logger: capture.logger(label: "pricealert.dispatch"))
        await dispatcher.dispatch(sampleAlert(notify: ["broken"]))
        let record = capture.records.first
        #expect(capture.records.count == 1)
        #expect(record?.label == "pricealert.dispatch")
        #expect(record?.level == .error)
        #expect(record?.message == "sink 'broken' failed to deliver btc-100k:BTC:1700000000000: HTTP 404")
        #expect(record?.metadata == ["sink": "broken", "alert": "btc-100k:BTC:1700000000000", "retryable": "false"])
    }

    @Test func unknownSinkReason() async {
        let dispatcher = Dispatcher(sinks: [:])
        let results = await dispatcher.dispatch(sampleAlert(notify: ["ghost"]))
        #expect(results.first?.result == .permanent(reason: "unknown sink"))
    }

    @Test func inMemorySinkRecovers() async {
        let sink = InMemorySink(name: "m")
        sink.fail(with: .permanent(reason: "no"))
        #expect(await sink.send(sampleAlert(time: 1)) == .permanent(reason: "no"))
        sink.fail(with: nil)
        #expect(await sink.send(sampleAlert(time: 2)) == .delivered)
        #expect(sink.alerts.map(\.time) == [2])
        #expect(sink.attempts == 2)
    }

    @Test func factoryBuildsEveryType() throws {
        let stdout = try SinkFactory.make(.builtinStdout)
        #expect(stdout is StdoutSink)
        #expect(stdout.name == "stdout")
        let webhook = try SinkFactory.make(
            SinkDefinition(name: "ops", kind: .webhook(WebhookSpec(url: .inline("https://x")))))
        #expect(webhook is WebhookSink)
        let sinks = try SinkFactory.makeAll([
            .builtinStdout, SinkDefinition(name: "pager", kind: .exec(ExecSpec(command: ["x"])))
        ])
        #expect(sinks["pager"] is ExecSink)
        #expect {
            _ = try SinkFactory.make(
                SinkDefinition(name: "ops", kind: .webhook(WebhookSpec(url: .environment("PRICEALERT_TEST_UNSET_URL"))))
            )
        } throws: { error in
            "\(error)" == "webhook sink 'ops': url variable PRICEALERT_TEST_UNSET_URL is not set or empty"
        }
    }
}

import AlertModel
import AlertPolicy
import AlertSinksTesting
import Foundation
import Platform
import Testing

@testable import AlertSinks

/// `Sink.send(_ delivery:)` and the dispatchers' `dispatch(_ delivery:to:urgent:)`: a digest
/// reaches a file or stdout sink as its own lines, and an event as `send(_ alert:)` writes it.
@Suite struct DeliverySeamTests {
    let digest = Digest(sink: "journal", events: [sampleAlert("a", time: 1), sampleAlert("b", time: 2)])

    @Test func fileSinkWritesADigestAsOneJSONLine() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/alerts.jsonl"
        let sink = try FileSink(name: "journal", path: path)
        let event = sampleAlert("c", time: 3)
        #expect(await sink.send(.digest(digest)) == .delivered)
        #expect(await sink.send(.event(event)) == .delivered)
        let content = try String(contentsOfFile: path, encoding: .utf8)
        #expect(content == DigestFormat.json(digest) + "\n" + AlertFormat.json(event) + "\n")
        #expect(content.hasPrefix("{\"kind\":\"digest\",\"id\":\"digest:journal:a:BTC:1\""))
    }

    @Test func stdoutSinkWritesAHeadlineAndEveryEvent() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let output = StandardOutput(fileDescriptor: fds[1])
        let text = StdoutSink(name: "console", format: .text, output: output)
        let json = StdoutSink(name: "console", format: .json, output: output)
        #expect(await text.send(.digest(digest)) == .delivered)
        #expect(await json.send(.digest(digest)) == .delivered)
        close(fds[1])
        let written = String(decoding: FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile(), as: UTF8.self)
        let expected = [
            DigestFormat.headline(digest), "  " + AlertFormat.text(digest.events[0]),
            "  " + AlertFormat.text(digest.events[1]), DigestFormat.json(digest)
        ]
        #expect(written == expected.map { $0 + "\n" }.joined())
    }

    @Test func dispatcherSendsADeliveryToTheNamedSinks() async {
        let a = InMemorySink(name: "a")
        let b = InMemorySink(name: "b")
        let dispatcher = Dispatcher(sinks: ["a": a, "b": b])
        let results = await dispatcher.dispatch(.digest(digest), to: ["b", "ghost"], urgent: false)
        #expect(results.map(\.sink) == ["b", "ghost"])
        #expect(results.map(\.result) == [.delivered, Dispatcher.unknownSink])
        #expect(b.deliveries == [.digest(digest)])
        #expect(a.deliveries.isEmpty)
    }

    /// A sink that only knows events gets a digest's events one by one, up to the first refusal.
    @Test func defaultSendsADigestEventByEvent() async {
        struct Counting: Sink {
            let name = "plain"
            let seen = InMemorySink(name: "plain")
            func send(_ alert: Alert) async -> SinkResult {
                seen.attempts == 1 ? .retry(reason: "busy", after: nil) : await seen.send(alert)
            }
        }
        let sink = Counting()
        let three = Digest(sink: "plain", events: (1...3).map { sampleAlert(time: Int64($0)) })
        #expect(await sink.send(.digest(three)) == .retry(reason: "busy", after: nil))
        #expect(sink.seen.alerts.map(\.time) == [1])
    }
}

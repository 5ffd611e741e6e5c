import AlertModel
import AlertPolicy
import Foundation
import Testing

@testable import AlertSinks

/// `FileSink.send(_ deliveries:)`: the lines of many deliveries, in order, about 64 KiB a
/// `write(2)`, each delivery reported delivered once its line is written.
@Suite struct FileSinkBatchTests {
    /// Events of every shape: non-ASCII text and characters JSON escapes in the rule, symbol and
    /// message, fractions and large numbers, reminders and resolved events.
    static func events(_ count: Int, tag: String = "r") -> [Alert] {
        (0..<count).map { i in
            let kind: AlertKind = i % 11 == 0 ? .resolved : i % 13 == 0 ? .reminder : .alert
            return Alert(
                rule: "\(tag)-\(i % 7 == 0 ? "é\"q\\" : "")\(i)", symbol: i % 3 == 0 ? "ÉTH" : "BTC",
                time: 1_700_000_000_000 + Int64(i) * 1_001, price: Double(i) * 1.25 + 0.001,
                condition: "price above \(i)", threshold: .value(Double(i) * 1e9), value: Double(i) / 3,
                template: i % 5 == 0 ? "{{symbol}}\t\"{{price}}\" ✓ {{time}}" : MessageTemplate.defaultTemplate,
                notify: ["journal"], kind: kind, reminder: kind == .reminder ? i : nil)
        }
    }

    static func line(_ delivery: Delivery) -> String {
        switch delivery {
        case .event(let alert): return AlertFormat.json(alert) + "\n"
        case .digest(let digest): return DigestFormat.json(digest) + "\n"
        }
    }

    @Test func aBatchIsEveryLineInOrder() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/alerts.jsonl"
        let alerts = Self.events(5_000)
        var deliveries = alerts.map(Delivery.event)
        deliveries.insert(.digest(Digest(sink: "journal", events: Array(alerts[10..<14]))), at: 1_000)
        deliveries.append(.digest(Digest(sink: "journal", events: Array(alerts[20..<22]), held: true)))
        let sink = try FileSink(name: "journal", path: path)

        let results = await sink.send(deliveries)
        #expect(results == Array(repeating: .delivered, count: deliveries.count))
        let expected = deliveries.map(Self.line).joined()
        #expect(expected.utf8.count > 10 * FileSink.chunkBytes)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == expected)

        // One event at a time appends after the batch.
        #expect(await sink.send(alerts[0]) == .delivered)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == expected + Self.line(.event(alerts[0])))
    }

    /// Tasks sending batches at once: every line whole, each task's lines in its order.
    @Test func concurrentBatchesNeverInterleave() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/alerts.jsonl"
        let sink = try FileSink(name: "journal", path: path)
        let tasks = 6, batches = 10, perBatch = 300
        let sent = (0..<tasks).map { Self.events(batches * perBatch, tag: "task\($0)") }
        await withTaskGroup(of: Void.self) { group in
            for events in sent {
                group.addTask {
                    for start in stride(from: 0, to: events.count, by: perBatch) {
                        let results = await sink.send(events[start..<(start + perBatch)].map(Delivery.event))
                        #expect(results.allSatisfy { $0 == .delivered })
                    }
                }
            }
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "")
        var place: [String: (task: Int, index: Int)] = [:]
        for (task, events) in sent.enumerated() {
            for (index, alert) in events.enumerated() { place[AlertFormat.json(alert)] = (task, index) }
        }
        var next = Array(repeating: 0, count: tasks)
        for line in lines.dropLast() {
            guard let (task, index) = place[String(line)] else {
                Issue.record("not a whole line of any task: \(line.prefix(80))")
                continue
            }
            #expect(index == next[task], "task \(task)")
            next[task] = index + 1
        }
        #expect(next == Array(repeating: batches * perBatch, count: tasks))
    }

    /// `/dev/full` fails every write with ENOSPC: each delivery of the batch is reported failed.
    @Test func aFullDeviceFailsEveryDelivery() async throws {
        let sink = try FileSink(name: "journal", path: "/dev/full")
        let results = await sink.send(Self.events(3).map(Delivery.event))
        #expect(
            results
                == Array(
                    repeating: .retry(reason: "cannot write /dev/full: No space left on device", after: nil), count: 3))
    }
}

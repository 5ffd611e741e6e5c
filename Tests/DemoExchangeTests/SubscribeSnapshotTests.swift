import AlertTestSupport
import DemoExchange
import Foundation
import Synchronization
import Testing

/// A subscription's snapshot and its first update on a look-alike, as on a real exchange: the
/// snapshot shows the board after the step before the first update, or after that step itself
/// (the board already had it when the snapshot was read); never an older board, which would
/// mean a step fell between the snapshot and the updates and reached the client nowhere.
@Suite("look-alike subscribe snapshots")
struct SubscribeSnapshotTests {
    /// One Kraken ticker message's `timestamp` and `last`.
    struct Point: Equatable {
        var time: String
        var last: Double
    }

    static func point(_ message: String?) throws -> Point? {
        let object = try object(message)
        guard let data = (object["data"] as? [[String: Any]])?.first,
            let time = data["timestamp"] as? String, let last = (data["last"] as? NSNumber)?.doubleValue
        else { return nil }
        return Point(time: time, last: last)
    }

    /// What the watcher saw, and each round's snapshot and first update.
    final class Record: Sendable {
        let steps = Mutex<[Point]>([])
        let samples = Mutex<[(snapshot: Point, first: Point)]>([])
    }

    static let subscribe = #"{"method":"subscribe","params":{"channel":"ticker","symbol":["BTC/USD"]}}"#

    @Test("Kraken: a subscription made while prices step every 2 ms misses no step")
    func noStepFallsBetweenTheSnapshotAndTheUpdates() async throws {
        try await withExchange(walk(interval: .milliseconds(2))) { _, port in
            // A watcher subscribed throughout sees every step, in order.
            let record = Record()
            // The rounds start once the watcher follows the market, so it sees their updates.
            let (watching, watcherSubscribed) = AsyncStream.makeStream(of: Void.self)
            let rounds = 150
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await RawWebSocket.connect(port: port, path: "/v2") { socket in
                        _ = try await socket.nextText()
                        try await socket.send(Self.subscribe)
                        _ = try await socket.nextText() // the ack
                        _ = try await socket.nextText() // the snapshot
                        watcherSubscribed.finish()
                        // Until every round's first update has been seen here too.
                        while true {
                            guard let text = try await socket.nextText() else { return }
                            guard text.contains(#""type":"update""#), let point = try Self.point(text) else { continue }
                            let done = record.steps.withLock { steps in
                                steps.append(point)
                                let firsts = record.samples.withLock { $0.map(\.first) }
                                return firsts.count == rounds && firsts.allSatisfy { $0.time < point.time }
                            }
                            if done { return }
                        }
                    }
                }
                group.addTask {
                    for await _ in watching {}
                    for _ in 0..<rounds {
                        try await RawWebSocket.connect(port: port, path: "/v2") { socket in
                            _ = try await socket.nextText()
                            try await socket.send(Self.subscribe)
                            _ = try await socket.nextText() // the ack
                            let snapshot = try #require(try Self.point(try await socket.nextText()))
                            let first = try #require(
                                try Self.point(try await socket.nextText(where: { $0.contains(#""type":"update""#) })))
                            record.samples.withLock { $0.append((snapshot, first)) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let seen = record.steps.withLock { $0 }
            var older: [String] = []
            for (snapshot, first) in record.samples.withLock({ $0 }) {
                let k = try #require(seen.firstIndex(of: first), "the watcher never saw \(first)")
                guard k > 0 else { continue } // the step before is the watcher's snapshot
                if snapshot.last != first.last && snapshot.last != seen[k - 1].last {
                    older.append("snapshot \(snapshot.last) at \(snapshot.time), then \(first.last) at \(first.time)")
                }
            }
            #expect(older.isEmpty, "snapshots older than the step before the first update: \(older.prefix(5))")
        }
    }
}

import AlertModel
import AlertTestSupport
import DemoExchange
import Foundation
import Synchronization
import Testing

@Suite("replay and faults")
struct FaultTests {
    @Test("replay sends the file's prices in order, grouped by time, then stops")
    func replay() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "exchange-replay-\(UUID().uuidString).jsonl")
        try """
        {"time": 1000, "symbol": "BTC", "price": 100.5}
        {"time": 1000, "symbol": "eth", "price": 10}
        {"time": 1000, "symbol": "BTC", "price": 101}
        {"time": 1050, "symbol": "SOL", "price": 5.25}
        not a tick
        {"time": 1100, "symbol": "BTC", "price": 99}
        """.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let loaded = try PriceMode.loadTicks(path: file.path)
        #expect(loaded.ticks.count == 5)
        #expect(loaded.skipped == 1)
        let config = ExchangeConfiguration(port: 0, prices: .replay(ticks: loaded.ticks, speed: 0))
        try await withExchange(config) { server, port in
            let frames = try await withClient(port: port) { messages, outbound in
                try await outbound.write(.text(subscribeCoinIndex))
                var frames: [[String: Double]] = []
                while frames.count < 4, let text = try await messages.next(where: isCoinIndex) {
                    let data = try #require(coinIndexData(text))
                    frames.append(data.mapValues { $0["price"] as? Double ?? -1 })
                }
                try await Task.sleep(for: .milliseconds(300))
                return frames
            }
            #expect(frames == [["BTC_1": 100.5, "ETH_1": 10], ["BTC_1": 101], ["SOL_1": 5.25], ["BTC_1": 99]])
            #expect(server.stats.priceSteps == 4)
            #expect(server.stats.framesSent == 4)
        }
    }

    @Test("replay paces frames by recorded time divided by speed")
    func replayPacing() async throws {
        let ticks = (0..<3).map { Tick(time: Int64($0) * 1_000, symbol: "BTC", price: 100 + Double($0)) }
        let clock = ManualClock()
        // 250 ms apart.
        let config = ExchangeConfiguration(port: 0, prices: .replay(ticks: ticks, speed: 4), clock: clock)
        let arrivals = try await withExchange(config) { server, port in
            try await arrivalsOfPriceFrames(3, clock: clock, server: server, port: port) { $0 }
        }
        #expect(arrivals == [.zero, .milliseconds(250), .milliseconds(500)])
    }

    @Test("dropEvery closes the connection")
    func dropEvery() async throws {
        try await withExchange(walk(faults: ExchangeFaults(dropEvery: .milliseconds(500)))) { server, port in
            let framesBeforeClose = try await withClient(port: port) { messages, outbound in
                try await outbound.write(.text(subscribeCoinIndex))
                var frames = 0
                while try await messages.next() != nil { frames += 1 }
                return frames
            }
            // The loop ends only when the exchange closes the connection.
            #expect(framesBeforeClose >= 1)
            #expect(server.stats.connectionsDropped >= 1)
        }
    }

    @Test("invalidEvery replaces every Nth price frame, alternating not-JSON and wrong-shape JSON")
    func invalidEvery() async throws {
        try await withExchange(walk(faults: ExchangeFaults(invalidEvery: 2))) { server, port in
            let frames = try await withClient(port: port) { messages, outbound in
                try await outbound.write(.text(subscribeCoinIndex))
                var frames: [String] = []
                while frames.count < 4,
                    let text = try await messages.next(where: {
                        $0.contains("coinIndex") && !$0.hasPrefix(#"{"event""#)
                    })
                {
                    frames.append(text)
                }
                return frames
            }
            #expect(frames.count == 4)
            #expect(coinIndexData(frames[0]) != nil)
            #expect(coinIndexData(frames[2]) != nil)
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(frames[1].utf8))) == nil, "frame 2 should not be JSON")
            #expect((try? JSONSerialization.jsonObject(with: Data(frames[3].utf8))) != nil, "frame 4 should be JSON")
            #expect(coinIndexData(frames[3]) == nil, "frame 4 should have the wrong shape")
            #expect(server.stats.invalidFramesSent >= 2)
        }
    }

    @Test("silence stops frames for the configured time, keeps the connection, then frames resume")
    func silence() async throws {
        let clock = ManualClock()
        var config = walk(faults: ExchangeFaults(silenceAfter: .milliseconds(300), silenceFor: .seconds(3)))
        config.clock = clock
        // One step each 100 ms; those from 300 ms to 3.3 s send nothing.
        let sends: @Sendable (Int) -> Bool = { step in step * 100 < 300 || step * 100 >= 3_300 }
        let arrivals = try await withExchange(config) { server, port in
            try await arrivalsOfPriceFrames(8, clock: clock, server: server, port: port) { steps in
                (0..<steps).filter(sends).count
            }
        }
        // Eight frames on one connection, none while silenced.
        #expect(arrivals == [0, 100, 200, 3_300, 3_400, 3_500, 3_600, 3_700].map { Duration.milliseconds($0) })
    }

    @Test("faults can be changed while running")
    func setFaults() async throws {
        try await withExchange(walk()) { server, port in
            server.setFaults(ExchangeFaults(status429: 1))
            let first = try await get(port, "/spot/api/v3.2/market_summary")
            let second = try await get(port, "/spot/api/v3.2/market_summary")
            #expect(first.status == 429)
            #expect(second.status == 200)
            #expect(server.currentFaults.status429 == 1)
        }
    }
}

/// Subscribes to coinIndex and returns when each of the first `count` price frames arrived, on
/// the exchange's `clock`, which this drives: it moves the clock to the next deadline only once
/// the exchange is quiet, with its price feed and its fault timer asleep and every frame sent
/// received, so each time is exactly the one the exchange sent the frame at. `sent` gives how
/// many frames the exchange has sent after that many price steps.
func arrivalsOfPriceFrames(
    _ count: Int, clock: ManualClock, server: DemoExchangeServer, port: Int,
    sent: @escaping @Sendable (Int) -> Int
) async throws -> [Duration] {
    let arrivals = Arrivals()
    let driver = Task {
        while !Task.isCancelled {
            let quiet =
                clock.deadlines.count == 2
                && arrivals.times.withLock { $0.count } == sent(server.stats.priceSteps)
            if quiet, let next = clock.deadlines.first {
                clock.advance(by: clock.now.duration(to: next))
            } else {
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
    }
    defer { driver.cancel() }
    try await withClient(port: port) { messages, outbound in
        try await outbound.write(.text(subscribeCoinIndex))
        for _ in 0..<count {
            guard try await messages.next(where: isCoinIndex) != nil else { return }
            arrivals.times.withLock { $0.append(clock.now.offset) }
        }
    }
    return arrivals.times.withLock { $0 }
}

/// When frames arrived, on a test's clock.
final class Arrivals: Sendable {
    let times = Mutex<[Duration]>([])
}

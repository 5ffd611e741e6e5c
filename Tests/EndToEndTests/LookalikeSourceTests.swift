import AlertTestSupport
import Foundation
import Testing

/// The five sources of the built binary against `pricealert exchange`'s look-alikes, which are
/// written from each exchange's documentation (not from the clients), so they check the
/// clients independently: prices arrive, keep-alive rules are kept, dropped connections are
/// reconnected, and no tick is written twice.
@Suite("end to end: the five sources against the look-alikes", .programs)
struct LookalikeSourceTests {
    static let sources = ["binance", "coinbase", "kraken", "bybit", "okx"]

    /// Runs `body` with `pricealert exchange` (plus `options`) on a free port.
    func withLookalikes<T>(_ options: [String], _ body: (Int) async throws -> T) async throws -> T {
        let server = try PriceAlertBinary.start(["exchange", "--port", "0", "--interval", "200ms"] + options)
        let ready = try await server.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 60)
        let port = try #require(
            ready.components(separatedBy: "127.0.0.1:").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) })
        do {
            let result = try await body(port)
            _ = try await server.stop(signal: SIGTERM)
            return result
        } catch {
            _ = try? await server.stop(signal: SIGTERM)
            throw error
        }
    }

    func tempFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-alike-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Records `source` until `done` holds of its stderr and the file has at least `lines`
    /// ticks; returns the ticks (time, symbol) and stderr.
    func record(
        _ source: String, port: Int, lines: Int, in dir: URL,
        until done: @escaping @Sendable (String) -> Bool = { _ in true }
    ) async throws -> (ticks: [(time: Int64, symbol: String)], stderr: String) {
        let running = try PriceAlertBinary.start(
            ["record", "--source", source, "--endpoint", "http://127.0.0.1:\(port)", "--out", "ticks.jsonl"], in: dir)
        let out = dir.appendingPathComponent("ticks.jsonl").path
        let count = { (FileManager.default.contents(atPath: out) ?? Data()).count(where: { $0 == 0x0A }) }
        var looks = 0
        while count() < lines || !done(running.stderr) {
            looks += 1
            if looks > 9_000 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await running.stop(signal: SIGTERM) == 0)
        let ticks = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map { line in
            let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return (
                time: try #require((json["time"] as? NSNumber)?.int64Value),
                symbol: try #require(json["symbol"] as? String)
            )
        }
        return (ticks, running.stderr)
    }

    /// No tick written twice: per symbol, times strictly increase.
    func expectEachTickOnce(_ ticks: [(time: Int64, symbol: String)], _ source: String) {
        var last: [String: Int64] = [:]
        var repeats = 0
        for tick in ticks {
            if let seen = last[tick.symbol], tick.time <= seen { repeats += 1 }
            last[tick.symbol] = tick.time
        }
        #expect(repeats == 0, "\(source): \(repeats) ticks not newer than their symbol's previous one")
    }

    @Test(arguments: sources)
    func recordFollowsTheLookalike(_ source: String) async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (ticks, stderr) = try await withLookalikes([]) { port in
            try await record(source, port: port, lines: 50, in: dir)
        }
        #expect(ticks.count >= 50, "\(stderr)")
        #expect(ticks.allSatisfy { $0.symbol.contains("/") })
        #expect(ticks.contains { $0.symbol.hasPrefix("BTC/") })
        expectEachTickOnce(ticks, source)
    }

    /// Every connection is reset every 2 s: each source reconnects, subscribes afresh, and
    /// writes no tick twice.
    @Test(arguments: sources)
    func resetsAreReconnectedWithoutRepeats(_ source: String) async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (ticks, stderr) = try await withLookalikes(["--drop-every", "2", "--drop-mode", "reset"]) { port in
            try await record(source, port: port, lines: 100, in: dir) {
                $0.components(separatedBy: "retrying in").count > 2
            }
        }
        #expect(stderr.components(separatedBy: "retrying in").count > 2, "\(stderr)")
        #expect(ticks.count >= 100)
        expectEachTickOnce(ticks, source)
    }

    /// The Coinbase look-alike skips a `sequence_num` every 30 messages: the gap is logged and
    /// the feed subscribes afresh and goes on.
    @Test func coinbaseSequenceGapsAreNoticed() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (ticks, stderr) = try await withLookalikes(["--coinbase-sequence-gap-every", "30"]) { port in
            try await record("coinbase", port: port, lines: 100, in: dir) {
                $0.components(separatedBy: "sequence gap").count > 2
            }
        }
        #expect(stderr.contains("sequence gap: expected message"), "\(stderr)")
        #expect(ticks.count >= 100)
        expectEachTickOnce(ticks, "coinbase")
    }
}

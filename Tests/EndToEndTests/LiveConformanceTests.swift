import AlertFeeds
import AlertModel
import AlertTestSupport
import Foundation
import Testing

/// Rules v3 live: `run` of the built binary follows all five look-alike exchanges of
/// `pricealert exchange` at once (a seeded price walk) while the exchange drops every
/// connection every 3 s, with a close frame or with a TCP reset. At `trace` the daemon logs
/// each tick as the engine gets it, in order (Docs/cli.md); those ticks are the ground truth
/// (they are timed by each exchange, and which of them arrive depends on the drops), so the
/// reference engine (`ReferenceEngineV2`, version 3) is fed exactly them and must give the
/// events the daemon printed, event by event. Across every reconnect no tick of a market is
/// evaluated twice, and within a connection none of the exchange's price steps is missed.
@Suite("end to end: live conformance across the five exchanges with dropped connections", .programs)
struct LiveConformanceTests {
    static let venues = ["binance", "coinbase", "kraken", "bybit", "okx"]

    /// Per-exchange rules (qualified symbols, one unqualified symbol that is a pair per
    /// source), a median of the five with a quorum, a mean, a spread, a ratio, and volume.
    static func rules(port: Int) -> String {
        let sources = venues.map { #""\#($0)": {"type": "\#($0)", "endpoint": "http://127.0.0.1:\#(port)/\#($0)"}"# }
        return """
            {"version": 3,
             "sources": {\(sources.joined(separator: ",\n  "))},
             "sinks": {"out": {"type": "stdout", "format": "json"}},
             "defaults": {"notify": ["out"]},
             "series": {
               "btc-median": {"median": ["binance:BTC/USDT", "coinbase:BTC/USD", "kraken:BTC/USD", "bybit:BTC/USDT", "okx:BTC/USDT"],
                              "maxAge": "1s", "quorum": 4},
               "eth-mean": {"mean": ["kraken:ETH/USD", "bybit:ETH/USDT"], "maxAge": "1s", "quorum": 2},
               "btc-gap": {"spread": ["coinbase:BTC/USD", "binance:BTC/USDT"], "maxAge": "1s"},
               "eth-btc": {"ratio": ["okx:ETH/USDT", "okx:BTC/USDT"], "maxAge": "5s"}
             },
             "rules": [
               {"id": "binance-btc", "symbol": "binance:BTC/USDT", "when": {"price": {"above": 1}}, "repeat": {"every": "1s"}},
               {"id": "coinbase-btc-step", "symbol": "coinbase:BTC/USD", "when": {"move": {"step": 5}}},
               {"id": "kraken-btc-band", "symbol": "kraken:BTC/USD", "when": {"price": {"outside": [42995, 43005]}}, "resolve": true},
               {"id": "bybit-btc-volume", "symbol": "bybit:BTC/USDT", "when": {"volume": {"above": 1}}, "repeat": {"every": "2s"}},
               {"id": "okx-btc-cross", "symbol": "okx:BTC/USDT", "when": {"price": {"crossesAbove": 43000}}},
               {"id": "eth-usdt-anywhere", "symbol": "ETH/USDT", "when": {"move": {"percent": 0.01}}},
               {"id": "kraken-eth-volume", "symbol": "kraken:ETH/USD",
                "when": {"all": [{"volume": {"above": 1}}, {"price": {"above": 1}}]}, "repeat": {"every": "1s"}},
               {"id": "median-step", "series": "btc-median", "when": {"move": {"step": 5}}},
               {"id": "median-held", "series": "btc-median", "when": {"price": {"above": 1}}, "repeat": {"every": "1s"}},
               {"id": "mean-step", "series": "eth-mean", "when": {"move": {"percent": 0.01}}},
               {"id": "gap", "series": "btc-gap", "when": {"any": [{"price": {"above": 0}}, {"price": {"below": 0}}]},
                "resolve": true},
               {"id": "ratio-step", "series": "eth-btc", "when": {"move": {"percent": 0.01}}}
             ]}
            """
    }

    /// One tick line the daemon logged, or the end of a source's connection.
    enum Logged {
        /// The tick, and the tick line it was logged as.
        case tick(Tick, Substring)
        case disconnected(String)
    }

    /// The ticks and ended connections in the order the daemon's engine got them. A
    /// connection's ticks all come before its end, and the next connection's after it (its
    /// `connected` may come after its first ticks, so it marks no boundary).
    static func logged(_ stderr: String) throws -> [Logged] {
        try stderr.split(separator: "\n").compactMap { line -> Logged? in
            if let at = line.range(of: " tick {") {
                let text = line[line.index(before: at.upperBound)...]
                return .tick(try TickLineParser.parse(Array(text.utf8)).get(), text)
            }
            for venue in venues where line.contains(" \(venue): ") && line.contains("; retrying in ") {
                return .disconnected(venue)
            }
            return nil
        }
    }

    /// An event as `kind id source symbol time price threshold value reminder`; numbers as
    /// doubles, so the daemon's JSON and the reference compare with a relative tolerance.
    struct Event: Equatable, CustomStringConvertible {
        var words: String
        var numbers: [Double]

        init(words: String, numbers: [Double]) {
            self.words = words
            self.numbers = numbers
        }

        init(_ event: RefEvent) {
            var numbers = [event.price, event.value]
            switch event.threshold {
            case .none: break
            case .number(let x): numbers.append(x)
            case .range(let l, let h): numbers += [l, h]
            }
            self.init(
                words:
                    "\(event.kind.rawValue) \(event.id) \(event.source ?? "-") \(event.symbol) \(event.time) \(event.reminder.map(String.init) ?? "-")",
                numbers: numbers)
        }

        /// One JSON line of the stdout sink.
        init(json line: Substring) throws {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let number = { (key: String) throws -> Double in try #require(object[key] as? NSNumber).doubleValue }
            var numbers = [try number("price"), try number("value")]
            if let x = object["threshold"] as? NSNumber {
                numbers.append(x.doubleValue)
            } else if let range = object["threshold"] as? [NSNumber] {
                numbers += range.map(\.doubleValue)
            }
            let time = try #require((object["time"] as? String).flatMap { Timestamp.parse(Array($0.utf8)) })
            self.init(
                words:
                    "\(object["kind"]!) \(object["id"]!) \(object["source"].map { "\($0)" } ?? "-") \(object["symbol"]!) \(time) \(object["reminder"].map { "\($0)" } ?? "-")",
                numbers: numbers)
        }

        static func == (a: Event, b: Event) -> Bool {
            a.words == b.words && a.numbers.count == b.numbers.count
                && zip(a.numbers, b.numbers).allSatisfy { abs($0 - $1) <= 1e-9 * max(1, abs($1)) }
        }

        var description: String { "\(words) \(numbers.map { JSONNumber.format($0) }.joined(separator: " "))" }
    }

    @Test(arguments: ["close", "reset"])
    func theDaemonGivesTheReferenceEventsOfTheTicksItGot(dropMode: String) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = try PriceAlertBinary.start(
            [
                "exchange", "--port", "0", "--seed", "7", "--interval", "500ms", "--drop-every", "3",
                "--drop-mode", dropMode
            ])
        let ready = try await exchange.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 60)
        let port = try #require(
            ready.components(separatedBy: "127.0.0.1:").dropFirst().first.flatMap { Int($0.prefix(while: \.isNumber)) })
        let rules = Self.rules(port: port)
        try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let daemon = try PriceAlertBinary.start(
            ["run", "--rules", "rules.json", "--stale-after", "10m"], in: dir,
            environment: ["PRICEALERT_LOG_LEVEL": "trace"])
        do {
            // Each source lost four connections, and every kind of rule fired.
            for venue in Self.venues {
                try await daemon.occurrences(.stderr, of: " \(venue): ws://", atLeast: 4, timeout: 300)
            }
            for rule in ["median-step", "mean-step", "gap", "ratio-step", "bybit-btc-volume", "kraken-eth-volume"] {
                _ = try await daemon.waitForStdoutLine(containing: #""rule":"\#(rule)""#, timeout: 300)
            }
        } catch {
            _ = try? await daemon.stop(signal: SIGKILL)
            _ = try? await exchange.stop(signal: SIGKILL)
            throw error
        }
        let status = try await daemon.stop(signal: SIGTERM, timeout: 120)
        _ = try await exchange.stop(signal: SIGTERM)
        let stderr = daemon.stderr
        #expect(status == 0, "\(stderr.suffix(3000))")
        for venue in Self.venues {
            #expect(stderr.contains(" \(venue): connected to ws://"), "\(venue) never connected")
        }

        let logged = try Self.logged(stderr)
        let ticks = logged.compactMap { if case .tick(let tick, _) = $0 { tick } else { nil } }
        let reference = try ReferenceEngineV2(files: [rules])
        let expected = ticks.flatMap { reference.process($0).map(Event.init) }
        let printed = try daemon.stdout.split(separator: "\n").map { try Event(json: $0) }
            .filter { !$0.words.contains(" @feed-") }
        #expect(expected.count > 100)
        for rule in ["binance-btc", "coinbase-btc-step", "eth-usdt-anywhere", "median-held"] {
            #expect(expected.contains { $0.words.contains(" \(rule):") }, "\(rule) never fired")
        }
        #expect(Self.difference(printed, expected) == nil, "daemon against reference")
        // The logged tick lines as a tick file: `replay` gives the same events too.
        let lines = logged.compactMap { if case .tick(_, let line) = $0 { line } else { nil } }
        try (lines.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let replay = try await PriceAlertBinary.run(
            ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--format", "json"], in: dir)
        #expect(replay.status == 0, "\(replay.stderr)")
        let replayed = try replay.stdout.split(separator: "\n").map { try Event(json: $0) }
        #expect(Self.difference(replayed, expected) == nil, "replay against reference")
        // The engine's count of accepted ticks is the logged ticks less those the reference drops.
        let summary = try #require(stderr.split(separator: "\n").last { $0.contains("run: ") })
        #expect(summary.contains("run: \(ticks.count - reference.dropped) ticks,"), "\(summary) of \(ticks.count)")

        Self.expectNoTickTwiceOrMissed(logged)
        // Coinbase numbers its messages: none of a connection was missed.
        #expect(
            !stderr.contains("sequence gap"), "\(stderr.split(separator: "\n").filter { $0.contains("sequence gap") })")
    }

    /// Where two event lists first differ, or nil when they are the same.
    static func difference(_ got: [Event], _ expected: [Event]) -> String? {
        if let k = zip(got, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            return "event \(k): \(got[k]), expected \(expected[k])"
        }
        return got.count == expected.count ? nil : "\(got.count) events, expected \(expected.count)"
    }

    /// Per source and market: no tick (exchange time and price) evaluated twice (a resubscribed
    /// connection may repeat what the last one sent; a snapshot on subscribing may share its
    /// millisecond with a step at another price, which is no repeat), and, within one
    /// connection, every price step of the exchange between the connection's first and last
    /// tick of the market is there. The
    /// exchange stamps one step with one time on all five look-alikes, so the steps are the
    /// times the ticks of that base asset carry, on any source, but for the first tick of each
    /// connection (a snapshot on subscribing, as Kraken's, is stamped when it is sent).
    static func expectNoTickTwiceOrMissed(_ logged: [Logged]) {
        var seen: Set<String> = []
        var repeats: [String] = []
        var connection: [String: Int] = [:]
        // (key, connection) → its tick times, in order; a source's first connection is 0.
        var segments: [String: [Int64]] = [:]
        var steps: [String: Set<Int64>] = [:]
        for entry in logged {
            switch entry {
            case .disconnected(let source): connection[source, default: 0] += 1
            case .tick(let tick, _):
                let source = tick.source ?? "-"
                let key = "\(source):\(tick.symbol)"
                if !seen.insert("\(key)@\(tick.time)=\(tick.price)").inserted {
                    repeats.append("\(key) at \(tick.time)")
                }
                let segment = "\(key)#\(connection[source, default: 0])"
                if segments[segment] != nil {
                    steps[String(tick.symbol.prefix { $0 != "/" }), default: []].insert(tick.time)
                }
                segments[segment, default: []].append(tick.time)
            }
        }
        #expect(repeats.isEmpty, "ticks evaluated twice: \(repeats.prefix(10))")
        var missed: [String] = []
        for (segment, times) in segments {
            guard let first = times.first, let end = times.last else { continue }
            let base = String(segment.split(separator: ":")[1].prefix { $0 != "/" })
            let got = Set(times)
            let skipped = steps[base, default: []].filter { $0 > first && $0 < end && !got.contains($0) }
            if !skipped.isEmpty { missed.append("\(segment): \(skipped.sorted().prefix(5))") }
        }
        #expect(missed.isEmpty, "steps missed within a connection: \(missed.sorted().prefix(10))")
        for venue in venues {
            #expect((connection[venue] ?? 0) >= 4, "\(venue) lost \(connection[venue] ?? 0) connections")
        }
    }
}

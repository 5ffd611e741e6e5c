import AlertModel
import AlertTestSupport
import Foundation
import Synchronization
import Testing

/// What the high-availability tests run: a real PostgreSQL (`PostgresServer`), a scripted
/// Binance on 127.0.0.1 streaming a known sequence of tickers whose time is the exchange's own
/// (`E`), a signed webhook receiver with two sinks, and `run --store` instances of the built
/// binary, each following the rule file's source `binance` (rules v3: ticks carry the
/// exchange's time, so every instance gives a tick's events the same ids).
///
/// What must arrive is computed by the v3 reference (`ReferenceEngineV2`) over the ticks
/// actually sent; the receiver's arrivals are compared with it by (id, sink).
struct FailoverStream: Sendable {
    /// The two markets streamed: Binance's wire symbol, the common symbol, and the level the
    /// rule on it crosses. Prices alternate below and above the level on each market, so every
    /// second tick of a market is a crossing and every tick's outcome depends on the one before.
    static let markets: [(wire: String, symbol: String, level: Double)] = [
        ("BTCUSDT", "BTC/USDT", 50_000), ("ETHBTC", "ETH/BTC", 0.05)
    ]

    /// The rule file: the source `binance` at the exchange, one `crossesAbove` per market, and
    /// two signed webhook sinks (`a`, `b`) that every rule notifies. Only upward crossings, and
    /// the first tick of each market below its level: the exchange's REST snapshot (the fixture's
    /// old prices and times) can then make no event, on any instance.
    static func rules(exchangePort: Int, hookPort: Int, secretFile: String) -> String {
        let sinks = ["a", "b"].map { name in
            #""\#(name)": {"type": "webhook", "url": "http://127.0.0.1:\#(hookPort)/hook/\#(name)", "secretFile": "\#(secretFile)", "timeout": "10s"}"#
        }
        let rules = markets.map { market in
            #"{"id": "up-\#(market.wire.lowercased())", "symbol": "binance:\#(market.symbol)", "when": {"price": {"crossesAbove": \#(market.level)}}}"#
        }
        return """
            {"version": 3,
             "sources": {"binance": {"type": "binance", "endpoint": "http://127.0.0.1:\(exchangePort)"}},
             "sinks": {\(sinks.joined(separator: ", "))},
             "defaults": {"notify": ["a", "b"]},
             "rules": [\(rules.joined(separator: ",\n  "))]}
            """
    }

    /// Tick `i` of the script (its time is set when it is sent): the markets in turn, each
    /// below then above its level, a little further each round.
    static func tick(_ i: Int, time: Int64) -> Tick {
        let market = markets[i % markets.count]
        let round = i / markets.count
        let step = market.level * 0.001 * Double(round % 17)
        let price = round % 2 == 0 ? market.level * 0.98 - step : market.level * 1.02 + step
        return Tick(time: time, symbol: market.symbol, price: price, change24h: 1.5, source: "binance", volume24h: 7)
    }

    /// Binance's raw `<symbol>@ticker` message for `tick`.
    static func frame(_ tick: Tick) -> String {
        let wire = markets.first { $0.symbol == tick.symbol }!.wire
        return #"{"e":"24hrTicker","E":\#(tick.time),"s":"\#(wire)","c":"\#(tick.price)","P":"1.5","q":"7"}"#
    }

    /// The (id, sink) pairs the spec gives for `ticks`, in order.
    static func expected(_ ticks: [Tick], rules: String) throws -> [SignedWebhookReceiver.Pair] {
        let reference = try ReferenceEngineV2(files: [rules])
        return ticks.flatMap { reference.process($0) }.flatMap { event in
            ["a", "b"].map { SignedWebhookReceiver.Pair(id: event.id, sink: $0) }
        }
    }
}

/// Streams `FailoverStream`'s script to every connection of `exchange` that has subscribed, one
/// tick every `interval`, each tick to all of them before the next: as an exchange broadcasts
/// a market's ticker to all its subscribers. A connection that opens later gets the ticks from
/// then on. A tick's time is the wall clock in ms when sent (strictly increasing), as an
/// exchange stamps its events.
final class TickBroadcast: Sendable {
    let exchange: ScriptedExchange
    let interval: Duration
    private let state = Mutex<(sent: [Tick], firstTick: [Int: Int], task: Task<Void, Never>?, pause: Pause)>(
        ([], [:], nil, .none))
    /// One event per tick sent.
    let sentEvents = EventCounter()
    /// One event each time the stream stops for a `pause()`.
    private let pauses = EventCounter()

    /// Whether the stream goes on: a pause is asked for, then takes effect before a round whose
    /// prices are below their levels.
    private enum Pause { case none, asked, paused }

    init(exchange: ScriptedExchange, interval: Duration = .milliseconds(20)) {
        self.exchange = exchange
        self.interval = interval
    }

    var sent: [Tick] { state.withLock { $0.sent } }
    var count: Int { sentEvents.count }

    /// The index of the first tick connection `n` (from 1) was sent, once it was sent one.
    func firstTick(ofConnection n: Int) -> Int? { state.withLock { $0.firstTick[n] } }

    func start() {
        let task = Task {
            var connections: [ScriptedConnection] = []
            var last: Int64 = 0
            while !Task.isCancelled {
                while connections.count < exchange.connectionCount,
                    let next = try? await exchange.connection(connections.count + 1)
                {
                    connections.append(next)
                }
                let open = connections.indices.filter { !connections[$0].texts.isEmpty && !connections[$0].isClosed }
                if !open.isEmpty, !holdsBack(count) {
                    last = max(last + 1, Int64(Date().timeIntervalSince1970 * 1000))
                    let index = count
                    let tick = FailoverStream.tick(index, time: last)
                    let frame = FailoverStream.frame(tick)
                    state.withLock { state in
                        state.sent.append(tick)
                        for n in open where state.firstTick[n + 1] == nil { state.firstTick[n + 1] = index }
                    }
                    for n in open { connections[n].send(frame) }
                    sentEvents.record()
                }
                try? await Task.sleep(for: interval)
            }
        }
        state.withLock { $0.task = task }
    }

    /// Whether the stream stops before tick `index`: a pause was asked for and `index` begins a
    /// round below the levels. Whatever ticks an instance then misses, its state after that
    /// round's ticks is the same (each market below its level), so what the ticks after a pause
    /// give depends only on which of them an instance receives.
    private func holdsBack(_ index: Int) -> Bool {
        let startsBelow = index % FailoverStream.markets.count == 0 && (index / FailoverStream.markets.count) % 2 == 0
        let stops = state.withLock { state in
            switch state.pause {
            case .none: return false
            case .paused: return true
            case .asked:
                guard startsBelow else { return false }
                state.pause = .paused
                return true
            }
        }
        if stops, pauses.count < pausesAsked { pauses.record() }
        return stops
    }

    private let asked = Mutex(0)
    private var pausesAsked: Int { asked.withLock { $0 } }

    /// Stops the stream before the next round below the levels; returns once it has stopped
    /// (no tick is sent until `resume`).
    func pause(timeout: Duration = .seconds(60)) async throws {
        let n = asked.withLock { asked in
            asked += 1
            return asked
        }
        state.withLock { $0.pause = .asked }
        try await pauses.wait(for: n, timeout: timeout)
    }

    /// Sends ticks again after `pause`, from a round below the levels.
    func resume() {
        state.withLock { $0.pause = .none }
    }

    /// Stops sending and returns every tick sent.
    func stop() async -> [Tick] {
        let task = state.withLock { $0.task }
        task?.cancel()
        await task?.value
        return sent
    }

    /// Waits until `n` ticks in all have been sent.
    func waitForTicks(_ n: Int, timeout: Duration = .seconds(120)) async throws {
        try await sentEvents.wait(for: n, timeout: timeout)
    }

    /// Waits until `more` ticks beyond those sent so far have been sent.
    func waitForMoreTicks(_ more: Int, timeout: Duration = .seconds(120)) async throws {
        try await waitForTicks(count + more, timeout: timeout)
    }

    /// Waits until connection `n` (from 1) has subscribed, then until it has been sent `ticks`
    /// ticks: an instance on it follows the stream.
    func waitUntilFollowing(connection n: Int, ticks: Int, timeout: Duration = .seconds(120)) async throws {
        _ = try await exchange.connection(n, timeout: timeout).waitForTexts(1, timeout: timeout)
        // The tick being sent as it subscribed may have gone to the others only.
        var next = count + 1
        while firstTick(ofConnection: n) == nil {
            try await waitForTicks(next, timeout: timeout)
            next += 1
        }
        try await waitForTicks(firstTick(ofConnection: n)! + ticks, timeout: timeout)
    }
}

/// `run --store` instances in slots, each started again in its slot after it ends.
final class DaemonSlots: Sendable {
    let arguments: [String]
    let directory: URL
    let environment: [String: String]
    private let running = Mutex<[Int: ObservedProcess]>([:])
    /// Everything each ended process wrote, for messages.
    private let ended = Mutex<[String]>([])

    init(arguments: [String], directory: URL, environment: [String: String]) {
        self.arguments = arguments
        self.directory = directory
        self.environment = environment
    }

    @discardableResult
    func start(_ slot: Int) throws -> ObservedProcess {
        let process = try PriceAlertBinary.start(arguments, in: directory, environment: environment)
        running.withLock { $0[slot] = process }
        return process
    }

    func process(_ slot: Int) -> ObservedProcess? { running.withLock { $0[slot] } }

    /// The slot whose process has `pid`.
    func slot(pid: Int32) -> Int? { running.withLock { $0.first { $0.value.pid == pid }?.key } }

    /// Sends `signal` (SIGKILL, SIGTERM) to the slot's process and waits for its end; returns
    /// its status.
    @discardableResult
    func stop(_ slot: Int, signal: Int32, timeout: TimeInterval = 60) async throws -> Int32 {
        guard let process = running.withLock({ $0.removeValue(forKey: slot) }) else { return -1 }
        let status = try await process.stop(signal: signal, timeout: timeout)
        ended.withLock { $0.append("--- slot \(slot) pid \(process.pid) status \(status):\n\(process.stderr)") }
        return status
    }

    /// Stops every running process with SIGTERM; returns their statuses by slot.
    func stopAll() async throws -> [Int: Int32] {
        var statuses: [Int: Int32] = [:]
        for slot in running.withLock({ Array($0.keys) }).sorted() {
            statuses[slot] = try await stop(slot, signal: SIGTERM)
        }
        return statuses
    }

    /// Stops every process left (SIGKILL), for the end of a failed test.
    func killAll() async {
        for slot in running.withLock({ Array($0.keys) }) { _ = try? await stop(slot, signal: SIGKILL) }
    }

    /// What every process wrote on stderr: the ended ones', then the running ones'.
    var stderr: String {
        let running = running.withLock { $0 }.sorted { $0.key < $1.key }.map {
            "--- slot \($0.key) pid \($0.value.pid) running:\n\($0.value.stderr)"
        }
        return (ended.withLock { $0 } + running).joined(separator: "\n")
    }
}

/// The comparison of arrivals with the reference, by (id, sink): every expected pair arrived;
/// nothing arrived that the reference does not give; a pair that arrived more than once had a
/// disruption (an instance killed or stopped, the database restarted) spanning each two of its
/// arrivals: the first before the disruption was over (the source led again), the second after
/// it began; and there were no more repeats than outbox rows pending when the disruptions
/// began (where that is known). That is the at-least-once of a delivery whose sender was lost
/// before it recorded the outcome (Docs/postgres.md, guarantees), and nothing more: a leader
/// sending an alert twice shows as a repeat with no disruption around it, and a new leader
/// entering again what the old one entered (the ledger not skipping it) as more repeats than
/// rows were pending.
struct DeliveryCheck {
    struct Disruption: Sendable {
        var start: ContinuousClock.Instant
        var end: ContinuousClock.Instant?
        var pending: Int?
    }

    var missing: [SignedWebhookReceiver.Pair]
    var unexpected: [SignedWebhookReceiver.Pair]
    var repeats: Int
    var unexplainedRepeats: [SignedWebhookReceiver.Pair]
    /// For the first unexplained repeats: how long after the first each arrival came, from
    /// which port, and where the disruptions lay on that scale.
    var repeatTimes: [String] = []
    /// The most repeats the pending rows explain; nil when a disruption's are not known.
    var pendingBound: Int?

    init(
        expected: [SignedWebhookReceiver.Pair], arrivals: [SignedWebhookReceiver.Arrival], disruptions: [Disruption]
    ) {
        let want = Set(expected)
        var byPair: [SignedWebhookReceiver.Pair: [ContinuousClock.Instant]] = [:]
        var peers: [SignedWebhookReceiver.Pair: [Int?]] = [:]
        for arrival in arrivals {
            byPair[arrival.pair, default: []].append(arrival.at)
            peers[arrival.pair, default: []].append(arrival.peer)
        }
        missing = want.subtracting(byPair.keys).sorted()
        unexpected = Set(byPair.keys).subtracting(want).sorted()
        repeats = byPair.values.reduce(0) { $0 + $1.count - 1 }
        let now = ContinuousClock.now
        unexplainedRepeats = byPair.filter { _, times in
            zip(times, times.dropFirst()).contains { first, second in
                !disruptions.contains { first <= ($0.end ?? now) && second >= $0.start }
            }
        }.keys.sorted()
        func seconds(_ duration: Duration) -> String { String(format: "%.3f s", Double(duration.milliseconds) / 1000) }
        repeatTimes = unexplainedRepeats.prefix(5).map { pair in
            let times = byPair[pair] ?? []
            let spans = disruptions.map {
                "[\(seconds($0.start - times[0])), \(($0.end).map { seconds($0 - times[0]) } ?? "-")]"
            }
            let ports = (peers[pair] ?? []).map { $0.map(String.init) ?? "?" }
            return
                "\(pair): arrivals at \(times.map { seconds($0 - times[0]) }) from ports \(ports), disruptions \(spans)"
        }
        pendingBound = disruptions.allSatisfy { $0.pending != nil } ? disruptions.reduce(0) { $0 + $1.pending! } : nil
    }

    /// Records an issue for each way the arrivals differ from the reference.
    func expectExact(_ context: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            missing.isEmpty, "missing \(missing.count): \(missing.prefix(20))\n\(context())",
            sourceLocation: sourceLocation)
        #expect(
            unexpected.isEmpty, "not in the reference \(unexpected.count): \(unexpected.prefix(20))\n\(context())",
            sourceLocation: sourceLocation)
        #expect(
            unexplainedRepeats.isEmpty,
            "arrived twice with no disruption around: \(unexplainedRepeats.prefix(20))\n\(repeatTimes.joined(separator: "\n"))\n\(context())",
            sourceLocation: sourceLocation)
        if let pendingBound {
            #expect(
                repeats <= pendingBound, "\(repeats) repeats, \(pendingBound) rows pending at the disruptions",
                sourceLocation: sourceLocation)
        }
    }
}

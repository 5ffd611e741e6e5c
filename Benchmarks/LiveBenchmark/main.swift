// The live path on loopback, in one process: an in-benchmark BTSE-like server (Hummingbird,
// 127.0.0.1, ephemeral port) sends coinIndex frames; the real client path (FeedRunner +
// BTSESource + CurlHTTPClient → websocket → BTSECoinIndex parse → AsyncStream) feeds an Engine
// with generated rules, whose alerts go over an AsyncStream to a sink task, as LivePipeline does.
//   swift build -c release --product live-benchmark
//   .build/release/live-benchmark [--frames 20000] [--rules 3000] [--rate 200] [--seconds 10]
//   .build/release/live-benchmark --sources 5 [--markets 600] [--rules 30000] [--seconds 10]
//     [--store postgres://… | --state DIR] [--sink stdout|webhook]
//     (the five exchanges at once through `run`'s pipeline: FiveSources.swift; with --store or
//     --state, the engine state is saved there every second, as `run --store`/`--state` with
//     `--save-every 1s` does, and with --sink webhook as well, alerts go through its outbox)
// Benchmarks/run-live.sh builds and runs it. Two measurements, one line each:
//   throughput: N frames of 150 entries sent as fast as the socket takes them → frames/s, ticks/s
//   latency:    frames at a steady rate; instant before the server writes a frame → instant the
//               sink receives the alert it causes (p50/p90/p99/max)
import AlertEngine
import AlertFeeds
import AlertHTTP
import AlertModel
import Glibc
import Hummingbird
import HummingbirdWebSocket
import Logging
import SeededRandom
import Synchronization

struct Options {
    var frames = 20_000
    var rules = 3_000
    var entries = 150
    var rate = 200
    var seconds = 10
    var seed: UInt64 = 1
    /// 5: the five exchanges at once through `run`'s pipeline (FiveSources.swift); 1: BTSE.
    var sources = 1
    /// With `--sources 5`: markets per exchange, and the price steps rendered per source.
    var markets = 600
    var steps = 20
    /// With `--sources 5`: a PostgreSQL store or a state folder that `run` would use.
    var store: String?
    var state: String?
    /// With `--sources 5`: the type the counting sink is declared as (`webhook`: durable, so with
    /// a store every alert goes through its outbox).
    var sink = "stdout"

    init(_ args: [String]) {
        var i = 1
        while i + 1 < args.count {
            let value = args[i + 1]
            switch args[i] {
            case "--frames": frames = Int(value) ?? frames
            case "--rules": rules = Int(value) ?? rules
            case "--entries": entries = Int(value) ?? entries
            case "--rate": rate = Int(value) ?? rate
            case "--seconds": seconds = Int(value) ?? seconds
            case "--seed": seed = UInt64(value) ?? seed
            case "--sources": sources = Int(value) ?? sources
            case "--markets": markets = Int(value) ?? markets
            case "--steps": steps = Int(value) ?? steps
            case "--store": store = value
            case "--state": state = value
            case "--sink": sink = value
            default: fatalError("unknown option \(args[i])")
            }
            i += 2
        }
    }
}

let options = Options(CommandLine.arguments)
if options.sources == 5 {
    let explicitRules = CommandLine.arguments.contains("--rules")
    try await FiveSources.run(
        markets: options.markets, rules: explicitRules ? options.rules : 30_000, seconds: options.seconds,
        steps: options.steps, seed: options.seed, store: options.store, state: options.state,
        sink: options.sink)
    exit(0)
}
var rng = SeededRandom(seed: options.seed)
let symbols = (0..<options.entries).map { "SYM\($0)" }
let startPrice = symbols.map { _ in Double.random(in: 0.5...50_000, using: &rng) }

/// A many-user mix on the frame's symbols (levels and crossings ±30 % around the price, bands,
/// % moves over 5 min and 1 h), as in the replay benchmark.
@MainActor func makeRules(_ count: Int, rng: inout SeededRandom) -> [Rule] {
    (0..<count).map { i in
        let s = Int.random(in: 0..<symbols.count, using: &rng)
        let x = startPrice[s] * Double.random(in: 0.7...1.3, using: &rng)
        let condition: Condition
        switch Int.random(in: 0..<8, using: &rng) {
        case 0, 1: condition = .price(.above(x))
        case 2, 3: condition = .price(.below(x))
        case 4: condition = .price(.crossesAbove(x))
        case 5: condition = .price(.crossesBelow(x))
        case 6: condition = .price(.inside(x, x * 1.05))
        default: condition = .change(window: 5 * 60_000, .above(Double.random(in: 1...5, using: &rng)))
        }
        return Rule(
            id: "rule-\(i)", scope: .symbols([symbols[s]]), condition: condition,
            cooldown: [0, 60_000, 600_000].randomElement(using: &rng)!)
    }
}

/// `count` coinIndex frames of every symbol, prices random-walking (±0.05 % a step).
@MainActor func makeFrames(_ count: Int, rng: inout SeededRandom, extra: (Int) -> String? = { _ in nil }) -> [String] {
    var price = startPrice
    return (0..<count).map { f in
        var text = #"{"topic":"coinIndex","id":null,"data":{"#
        text.reserveCapacity(symbols.count * 64)
        for s in symbols.indices {
            price[s] *= 1 + Double.random(in: -0.0005...0.0005, using: &rng)
            if s > 0 { text += "," }
            text += #""\#(symbols[s])_1":{"id":"\#(symbols[s])","name":"\#(symbols[s])","type":1,"price":\#(price[s])}"#
        }
        if let entry = extra(f) { text += "," + entry }
        text += "}}"
        return text
    }
}

/// The frame sender of one server: what to send once the client subscribes.
protocol FrameSender: Sendable {
    func send(to outbound: WebSocketOutboundWriter) async throws
}

/// A minimal BTSE: empty market list and summary, and `/ws/futures` that runs `sender` after
/// the coinIndex subscribe. Returns the port and the task running the server (cancel it to stop).
func startServer(_ sender: some FrameSender) async throws -> (port: Int, task: Task<Void, any Error>) {
    var logger = Logger(label: "live-benchmark.server")
    // Not .warning: cancelling the server at the end logs a CancellationError at .error.
    logger.logLevel = .critical
    let router = Router(context: BasicWebSocketRequestContext.self)
    router.get("/futures/api/inquire/initial/market") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "[]")))
    }
    router.get("/spot/api/v3.2/market_summary") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "[]")))
    }
    let wsRouter = Router(context: BasicWebSocketRequestContext.self)
    wsRouter.ws("/ws/futures") { inbound, outbound, _ in
        try await withThrowingTaskGroup(of: Void.self) { group in
            var sending = false
            for try await message in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = message, text.contains("subscribe"), !sending else { continue }
                sending = true
                group.addTask { try await sender.send(to: outbound) }
            }
            group.cancelAll()
        }
    }
    let (ports, portSink) = AsyncStream<Int>.makeStream()
    let app = Application(
        router: router,
        server: .http1WebSocketUpgrade(webSocketRouter: wsRouter),
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            portSink.yield(channel.localAddress?.port ?? 0)
            portSink.finish()
        },
        logger: logger)
    let task = Task { try await app.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next(), port > 0 else { throw ServerDidNotStart() }
    return (port, task)
}

struct ServerDidNotStart: Error {}

/// A value shared between the server's, the client's and the main task.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// Sends every frame as fast as the socket takes them; records the instant before the first.
struct FloodSender: FrameSender {
    let frames: [String]
    let total: Int
    let started = Locked<ContinuousClock.Instant?>(nil)

    func send(to outbound: WebSocketOutboundWriter) async throws {
        started.withLock { $0 = .now }
        for i in 0..<total {
            try await outbound.write(.text(frames[i % frames.count]))
        }
    }
}

/// Sends frame `i` at start + i / rate, recording the instant just before each write.
struct PacedSender: FrameSender {
    let frames: [String]
    let rate: Int
    let sentAt: Locked<[ContinuousClock.Instant?]>

    func send(to outbound: WebSocketOutboundWriter) async throws {
        let clock = ContinuousClock()
        let start = clock.now + .milliseconds(100)
        let period = Duration.seconds(1) / rate
        for i in frames.indices {
            try await clock.sleep(until: start + period * i, tolerance: .zero)
            sentAt.withLock { $0[i] = clock.now }
            try await outbound.write(.text(frames[i]))
        }
    }
}

/// The client: the real FeedRunner on BTSESource + CurlHTTPClient; every `.ticks` event into
/// the engine; alerts over an AsyncStream to `sink` (a task of its own, like the dispatcher).
/// Stops after `frames` tick frames. Returns frames, ticks and alerts seen, and the instant the
/// last frame was through the engine.
func runClient(
    port: Int, rules: [Rule], frames: Int,
    sink: @escaping @Sendable (AsyncStream<Alert>) async -> Void
)
    async -> (frames: Int, ticks: Int, alerts: Int, end: ContinuousClock.Instant)
{
    var logger = Logger(label: "live-benchmark.feed")
    logger.logLevel = .warning
    let runner = FeedRunner(
        source: BTSESource(endpoint: "http://127.0.0.1:\(port)"), http: CurlHTTPClient(),
        logger: logger)
    let (events, feed) = runner.start()
    let (alertStream, alertOut) = AsyncStream.makeStream(of: Alert.self)
    let delivery = Task { await sink(alertStream) }
    var engine: Engine?
    var alerts: [Alert] = []
    var seenFrames = 0, seenTicks = 0, seenAlerts = 0
    var end = ContinuousClock.now
    for await event in events {
        switch event {
        case .markets(let markets):
            if engine == nil { engine = Engine(rules: rules, markets: MarketList(markets)) }
        case .ticks(let ticks):
            guard let engine else { continue }
            for tick in ticks { engine.process(tick, into: &alerts) }
            for alert in alerts { alertOut.yield(alert) }
            seenAlerts += alerts.count
            alerts.removeAll(keepingCapacity: true)
            seenFrames += 1
            seenTicks += ticks.count
        case .dropped(let reason):
            print("# dropped frame: \(reason)")
        case .disconnected(let reason, _):
            print("# disconnected: \(reason)")
        default:
            break
        }
        if seenFrames >= frames {
            end = .now
            break
        }
    }
    feed.cancel()
    alertOut.finish()
    await delivery.value
    return (seenFrames, seenTicks, seenAlerts, end)
}

extension Duration {
    var ms: Double {
        let (s, a) = components
        return Double(s) * 1e3 + Double(a) / 1e15
    }
}

/// The sink's receive instant of the alert caused by frame `index`.
struct Latency: Sendable {
    let index: Int
    let at: ContinuousClock.Instant
}

func fixed(_ value: Double, _ digits: Int = 1) -> String {
    guard value.isFinite else { return "nan" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = scaled / Int(scale), frac = abs(scaled) % Int(scale)
    var fracText = String(frac)
    while fracText.count < digits { fracText = "0" + fracText }
    return digits == 0 ? String(whole) : "\(whole).\(fracText)"
}

let rules = makeRules(options.rules, rng: &rng)

// 1. Throughput: a pool of 1000 distinct random-walk frames, sent in a cycle.
do {
    let pool = makeFrames(min(1_000, options.frames), rng: &rng)
    let sender = FloodSender(frames: pool, total: options.frames)
    let (port, server) = try await startServer(sender)
    let result = await runClient(port: port, rules: rules, frames: options.frames) { alerts in
        for await _ in alerts {}
    }
    server.cancel()
    guard let start = sender.started.withLock({ $0 }) else { fatalError("the server never sent") }
    let seconds = (result.end - start).ms / 1000
    print(
        """
        throughput frames=\(result.frames) entries/frame=\(options.entries) rules=\(options.rules) \
        frames/s=\(Int(Double(result.frames) / seconds)) ticks/s=\(Int(Double(result.ticks) / seconds)) \
        alerts=\(result.alerts) seconds=\(fixed(seconds, 2))
        """)
}

// 2. Latency: LAT alternates 500 / 2000+i, so `crossesAbove 1000` fires on every odd frame i.
do {
    let count = options.rate * options.seconds
    let frames = makeFrames(count, rng: &rng) { i in
        #""LAT_1":{"id":"LAT","name":"LAT","type":1,"price":\#(i % 2 == 1 ? 2000 + i : 500)}"#
    }
    var latRules = rules
    latRules.append(Rule(id: "lat", scope: .symbols(["LAT"]), condition: .price(.crossesAbove(1000))))
    let sender = PacedSender(frames: frames, rate: options.rate, sentAt: Locked(Array(repeating: nil, count: count)))
    let (port, server) = try await startServer(sender)
    let received = Locked<[Latency]>([])
    let result = await runClient(port: port, rules: latRules, frames: count) { alerts in
        var seen: [Latency] = []
        seen.reserveCapacity(count / 2)
        for await alert in alerts where alert.rule == "lat" {
            seen.append(Latency(index: Int(alert.price) - 2000, at: .now))
        }
        received.withLock { $0 = seen }
    }
    server.cancel()
    let sent = sender.sentAt.withLock { $0 }
    var latencies: [Double] = received.withLock { $0 }.compactMap { entry in
        sent.indices.contains(entry.index) ? sent[entry.index].map { (entry.at - $0).ms } : nil
    }
    latencies.sort()
    func percentile(_ p: Double) -> Double {
        latencies.isEmpty
            ? .nan : latencies[min(latencies.count - 1, Int((p * Double(latencies.count)).rounded(.up)) - 1)]
    }
    print(
        """
        latency rate=\(options.rate)/s frames=\(result.frames) alerts=\(latencies.count)/\(count / 2) rules=\(latRules.count) \
        p50_ms=\(fixed(percentile(0.5), 3)) p90_ms=\(fixed(percentile(0.9), 3)) p99_ms=\(fixed(percentile(0.99), 3)) \
        max_ms=\(fixed(latencies.last ?? .nan, 3))
        """)
}
exit(0)

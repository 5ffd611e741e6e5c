// Delivery benchmark: the whole durable path, ReliableDispatcher → SQLite outbox (WAL,
// synchronous=FULL, group commit) → WebhookSink (libcurl) → a Hummingbird receiver on 127.0.0.1.
//   swift build -c release --product delivery-benchmark
//   .build/release/delivery-benchmark [alerts] [rules] [concurrency]
// Reports the latency from `dispatch` to the receiver for alerts sent one at a time, first with
// an idle receiver and disk, split into the outbox commit and the HTTP request; then deliveries
// per second for a burst (alerts spread over `rules` rules, so up to `concurrency`, default 8 as
// in pricealert, go out at once); then the latency again right after the burst. Each alert is
// committed to the outbox (one fsync) before it is sent.
import AlertHTTP
import AlertModel
import AlertOutbox
import AlertSinks
import AlertStore
import AlertTestSupport
import Foundation
import Hummingbird
import Logging
import Synchronization

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let burst = arguments.first ?? 5_000
let ruleCount = arguments.dropFirst().first ?? 64
let concurrency = arguments.dropFirst(2).first ?? 8
let sequential = 2_000

/// Receive instants by alert id (from the `webhook-id` header).
let received = Mutex<[String: ContinuousClock.Instant]>([:])
/// When the webhook sink was handed each alert (its outbox row committed), by alert id.
let handed = Mutex<[String: ContinuousClock.Instant]>([:])

/// The webhook sink, noting when each attempt starts: splits the latency into the outbox
/// commit (dispatch → sink) and the HTTP request (sink → receiver).
struct Timed: Sink {
    let inner: any Sink
    var name: String { inner.name }
    func send(_ alert: Alert) async -> SinkResult {
        let now = ContinuousClock.now
        handed.withLock { $0[alert.id] = now }
        return await inner.send(alert)
    }
}

var logger = Logger(label: "delivery-benchmark")
logger.logLevel = .error
let router = Router()
router.post("hook") { request, _ -> Response in
    _ = try await request.body.collect(upTo: 1 << 20)
    if let id = request.headers[.init("webhook-id")!] {
        let now = ContinuousClock.now
        received.withLock { $0[id] = now }
    }
    return Response(status: .noContent)
}
let (ports, portSink) = AsyncStream<Int>.makeStream()
let app = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
    onServerRunning: { portSink.yield($0.localAddress?.port ?? 0) }, logger: logger)
let server = Task { try await app.runService() }
let port = await ports.first { _ in true } ?? 0

let folder = StateFolder(path: NSTemporaryDirectory() + "delivery-benchmark-\(getpid())")
try folder.create()
let store = try StateStore.open(folder)
let http = CurlHTTPClient()
let sink = try WebhookSink(name: "hook", spec: WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook")), client: http)
let dispatcher = ReliableDispatcher(
    sinks: ["hook": Timed(inner: sink)], durable: ["hook"], outbox: store.outbox,
    configuration: .init(concurrency: concurrency, pollInterval: 50), logger: logger)
try await dispatcher.start()

func alert(_ i: Int, rule: Int) -> Alert {
    Alert(
        rule: "rule-\(rule)", symbol: "BTC", time: 1_700_000_000_000 + Int64(i), price: 43_000 + Double(i % 100),
        condition: "price above 43000", threshold: .value(43_000), value: 43_000 + Double(i % 100),
        message: "BTC price above 43000", notify: ["hook"])
}

func waitFor(_ count: Int, timeout: Duration = .seconds(120)) async {
    let deadline = ContinuousClock.now + timeout
    while received.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
}

func millis(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
}

func report(_ what: String, _ values: [Double]) {
    let sorted = values.sorted()
    func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    print(
        String(
            format: "%@ over %d alerts: p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  max %.3f ms",
            what, sorted.count, at(0.5), at(0.9), at(0.99), sorted.last ?? 0))
}

/// Latency: `count` alerts one at a time, from dispatch to the receiver; `first` numbers them.
func latency(_ title: String, first: Int, count: Int) async {
    var latencies: [Double] = []
    var commits: [Double] = []
    var requests: [Double] = []
    let cpu = CPUSteal()
    for i in first..<first + count {
        let a = alert(i, rule: 0)
        let sent = ContinuousClock.now
        _ = await dispatcher.dispatch(a)
        await waitFor(i + 1, timeout: .seconds(10))
        if let got = received.withLock({ $0[a.id] }), let sink = handed.withLock({ $0[a.id] }) {
            latencies.append(millis(got - sent))
            commits.append(millis(sink - sent))
            requests.append(millis(got - sink))
        }
    }
    report("latency dispatch → receiver, \(title) (CPU steal \(cpu.since))", latencies)
    report("  dispatch → sink (outbox commit)", commits)
    report("  sink → receiver (HTTP request)", requests)
}

// 1. Latency with an idle receiver and an idle disk.
await latency("idle", first: 0, count: sequential)

// 2. Burst: enqueue everything, then wait until the receiver has all of it.
let burstCPU = CPUSteal()
let start = ContinuousClock.now
for i in 0..<burst { _ = await dispatcher.dispatch(alert(sequential + i, rule: i % ruleCount)) }
// `dispatch` returns once the alert is queued for the next group commit; this is when all are durable.
try await dispatcher.commit()
let enqueued = ContinuousClock.now - start
await waitFor(sequential + burst)
let elapsed = ContinuousClock.now - start
let seconds = millis(elapsed) / 1000
print(
    "burst: \(burst) alerts over \(ruleCount) rules, concurrency \(concurrency), \(received.withLock { $0.count } - sequential) delivered in "
        + String(
            format: "%.2f s = %.0f deliveries/s (all committed to the outbox at %.0f alerts/s)", seconds,
            Double(burst) / seconds,
            Double(burst) / (millis(enqueued) / 1000)) + " (CPU steal \(burstCPU.since))")

// 3. The same right after the burst, while the disk still writes it back (for comparison).
await latency("right after the burst", first: sequential + burst, count: sequential)

_ = await dispatcher.drain(timeout: .seconds(5))
http.shutdown()
store.close()
try? FileManager.default.removeItem(atPath: folder.path)
server.cancel()

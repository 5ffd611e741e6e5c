// Delivery benchmark: the whole durable path, ReliableDispatcher → SQLite outbox (WAL,
// synchronous=FULL, group commit) → WebhookSink (libcurl) → a Hummingbird receiver on 127.0.0.1.
//   swift build -c release --product delivery-benchmark
//   .build/release/delivery-benchmark [alerts] [rules] [concurrency]
// Reports deliveries per second for a burst (alerts spread over `rules` rules, so up to
// `concurrency`, default 4, go out at once) and the latency from `dispatch` to the receiver for
// alerts sent one at a time (p50/p99); each alert is committed to the outbox before it is sent.
import AlertCore
import AlertHTTP
import AlertSinks
import AlertStore
import Foundation
import Hummingbird
import Logging
import Synchronization

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let burst = arguments.first ?? 5_000
let ruleCount = arguments.dropFirst().first ?? 64
let concurrency = arguments.dropFirst(2).first ?? 4
let sequential = 2_000

/// Receive instants by alert id (from the `webhook-id` header).
let received = Mutex<[String: ContinuousClock.Instant]>([:])

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
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                      onServerRunning: { portSink.yield($0.localAddress?.port ?? 0) }, logger: logger)
let server = Task { try await app.runService() }
let port = await ports.first { _ in true } ?? 0

let folder = StateFolder(path: NSTemporaryDirectory() + "delivery-benchmark-\(getpid())")
try folder.create()
let store = try StateStore.open(folder)
let http = CurlHTTPClient()
let sink = try WebhookSink(name: "hook", spec: WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook")), client: http)
let dispatcher = ReliableDispatcher(sinks: ["hook": sink], durable: ["hook"], outbox: store.outbox,
                                    configuration: .init(concurrency: concurrency, pollInterval: 50), logger: logger)
await dispatcher.start()

func alert(_ i: Int, rule: Int) -> Alert {
    Alert(rule: "rule-\(rule)", symbol: "BTC", time: 1_700_000_000_000 + Int64(i), price: 43_000 + Double(i % 100),
          condition: "price above 43000", threshold: .value(43_000), value: 43_000 + Double(i % 100),
          message: "BTC price above 43000", notify: ["hook"])
}

func waitFor(_ count: Int, timeout: Duration = .seconds(120)) async {
    let deadline = ContinuousClock.now + timeout
    while received.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
}

// 1. Burst: enqueue everything, then wait until the receiver has all of it.
let start = ContinuousClock.now
for i in 0..<burst { _ = await dispatcher.dispatch(alert(i, rule: i % ruleCount)) }
// `dispatch` returns once the alert is queued for the next group commit; this is when all are durable.
await dispatcher.commit()
let enqueued = ContinuousClock.now - start
await waitFor(burst)
let elapsed = ContinuousClock.now - start
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let enqueueSeconds = Double(enqueued.components.seconds) + Double(enqueued.components.attoseconds) / 1e18
print("burst: \(burst) alerts over \(ruleCount) rules, concurrency \(concurrency), \(received.withLock { $0.count }) delivered in "
      + String(format: "%.2f s = %.0f deliveries/s (all committed to the outbox at %.0f alerts/s)", seconds, Double(burst) / seconds,
               Double(burst) / enqueueSeconds))

// 2. Latency: one alert at a time, from dispatch to the receiver.
var latencies: [Double] = []
for i in 0..<sequential {
    let a = alert(burst + i, rule: 0)
    let sent = ContinuousClock.now
    _ = await dispatcher.dispatch(a)
    await waitFor(burst + i + 1, timeout: .seconds(10))
    if let got = received.withLock({ $0[a.id] }) {
        let d = got - sent
        latencies.append(Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
    }
}
let sorted = latencies.sorted()
let p50 = sorted[min(sorted.count - 1, sorted.count / 2)]
let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
print(String(format: "latency dispatch → receiver over %d alerts: p50 %.3f ms  p99 %.3f ms  max %.3f ms",
             sorted.count, p50, p99, sorted.last ?? 0))

_ = await dispatcher.drain(timeout: .seconds(5))
http.shutdown()
store.close()
try? FileManager.default.removeItem(atPath: folder.path)
server.cancel()

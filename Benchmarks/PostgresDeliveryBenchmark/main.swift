// PostgreSQL outbox delivery benchmark: two deliverers share one outbox (Docs/postgres.md#several-deliverers-one-outbox).
//   swift build -c release --product postgres-delivery-benchmark
//   .build/release/postgres-delivery-benchmark [alerts] [rules] [concurrency]
// Starts Debian's PostgreSQL 15 (as the tests do: a new cluster in /tmp, on a free 127.0.0.1
// port) with its own durability settings (fsync and synchronous_commit on), or uses the store
// in PRICEALERT_STORE when set (its outbox must be empty). Two `ReliableDispatcher`s, each on a
// store connection of its own as two `run` instances are, deliver through `WebhookSink`
// (libcurl) to one Hummingbird receiver on 127.0.0.1, each claiming rows with `FOR UPDATE SKIP
// LOCKED` and recording each outcome in its own transaction. Phases:
//   1. backlog: `alerts` rows (over `rules` rules) are entered first, in one transaction; then
//      both deliverers start, and the time until the receiver has them all is measured;
//   2. flow: `alerts` more are dispatched, half through each deliverer, as fast as `dispatch`
//      returns (each committed to the outbox before it is sent), until the receiver has them.
// Each phase prints deliveries per second, how many each deliverer made, the duplicates the
// receiver saw (none expected), and the CPU steal (from /proc/stat).
import AlertHTTP
import AlertModel
import AlertOutbox
import AlertPostgres
import AlertSinks
import AlertTestSupport
import Foundation
import Hummingbird
import Logging
import Synchronization

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let count = arguments.first ?? 20_000
let ruleCount = arguments.dropFirst().first ?? 64
let concurrency = arguments.dropFirst(2).first ?? 16

/// Requests the receiver got, and how many of them repeated an id it had seen.
let received = Mutex<(ids: Set<String>, duplicates: Int)>(([], 0))

let logger = {
    var logger = Logger(label: "postgres-delivery-benchmark")
    logger.logLevel = .error
    return logger
}()
let router = Router()
router.post("hook") { request, _ -> Response in
    _ = try await request.body.collect(upTo: 1 << 20)
    if let id = request.headers[.init("webhook-id")!] {
        received.withLock { if !$0.ids.insert(id).inserted { $0.duplicates += 1 } }
    }
    return Response(status: .noContent)
}

func alert(_ i: Int) -> Alert {
    Alert(
        rule: "rule-\(i % ruleCount)", symbol: "BTC", time: 1_700_000_000_000 + Int64(i), price: 43_000,
        condition: "price above 43000", threshold: .value(43_000), value: 43_000 + Double(i % 100),
        message: "BTC price above 43000", notify: ["hook"])
}

func waitFor(_ total: Int) async {
    let deadline = ContinuousClock.now + .seconds(600)
    while received.withLock({ $0.ids.count }) < total, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

func report(
    _ phase: String, _ elapsed: Duration, _ dispatchers: [ReliableDispatcher], before: [Int],
    cpu: CPUSteal
) async {
    // A deliverer counts a delivery once its request returns, after the receiver has it.
    var made: [Int] = []
    let deadline = ContinuousClock.now + .seconds(10)
    repeat {
        made = []
        for (n, dispatcher) in dispatchers.enumerated() {
            made.append((await dispatcher.counts()["hook"]?.delivered ?? 0) - before[n])
        }
        if made.reduce(0, +) >= count { break }
        try? await Task.sleep(for: .milliseconds(5))
    } while ContinuousClock.now < deadline
    let (got, duplicates) = received.withLock { ($0.ids.count, $0.duplicates) }
    print(
        String(
            format:
                "%@: %d alerts over %d rules, concurrency %d per deliverer: %.2f s = %.0f deliveries/s; by deliverer %@; %d at the receiver, %d duplicates (CPU steal %@)",
            phase, count, ruleCount, concurrency, seconds(elapsed), Double(count) / seconds(elapsed),
            made.map(String.init).joined(separator: " + "), got, duplicates, cpu.since))
}

func run(_ url: String, port: Int) async throws {
    let store = try PostgresURL(url)
    let stores = [try await PostgresStore.open(store), try await PostgresStore.open(store)]
    let client = CurlHTTPClient()
    let dispatchers = try stores.map { store in
        let sink = try WebhookSink(
            name: "hook", spec: WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook")), client: client)
        return ReliableDispatcher(
            sinks: ["hook": sink], durable: ["hook"], outbox: store.outbox,
            configuration: .init(concurrency: concurrency, pollInterval: 50), logger: logger)
    }

    // 1. Backlog.
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    try await stores[0].outbox.enqueue(all: (0..<count).map { .event(alert($0)) }, sinks: ["hook"], now: now)
    var cpu = CPUSteal()
    var start = ContinuousClock.now
    async let first: Void = dispatchers[0].start()
    async let second: Void = dispatchers[1].start()
    _ = try await (first, second)
    await waitFor(count)
    await report("backlog", ContinuousClock.now - start, dispatchers, before: [0, 0], cpu: cpu)

    // 2. Flow.
    var before: [Int] = []
    for dispatcher in dispatchers { before.append(await dispatcher.counts()["hook"]?.delivered ?? 0) }
    cpu = CPUSteal()
    start = ContinuousClock.now
    for i in count..<(2 * count) { await dispatchers[i % 2].dispatch(alert(i)) }
    await waitFor(2 * count)
    await report("flow", ContinuousClock.now - start, dispatchers, before: before, cpu: cpu)

    for dispatcher in dispatchers { await dispatcher.drain(timeout: .seconds(5)) }
    for store in stores { await store.close() }
    client.shutdown()
}

try await LoopbackServer.with(router) { port in
    if let url = ProcessInfo.processInfo.environment["PRICEALERT_STORE"] {
        try await run(url, port: port)
    } else {
        try await PostgresServer.with(durable: true) { server in try await run(server.url(), port: port) }
    }
}

// Webhook delivery over loopback: `swift run -c release http-benchmark [seconds-per-run]`.
// POSTs a ~400-byte JSON alert to a Hummingbird receiver on 127.0.0.1 and reports deliveries
// per second for 1, 8 and 32 concurrent senders sharing one CurlHTTPClient, then the latency
// distribution of sequential POSTs.
import AlertHTTP

let seconds = CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 3
let alertJSON = #"""
    {"rule":"btc-above-100k","market":"BTC-USD","kind":"crossing","direction":"up","threshold":"100000","price":"100012.5","previous":"99987.25","time":"2026-11-21T21:30:00.123Z","message":"BTC-USD crossed above 100000 (100012.5)","labels":{"team":"trading","severity":"page"},"window":"1m","change":"0.0253","cooldown":"15m","id":"0f8c6a2e-1b7d-4c55-9a3e-5d2b8e7f1a90","source":"pricealert/0.1"}
    """#
let body = Array(alertJSON.utf8)

/// Sends POSTs from `senders` tasks until `seconds` have passed; returns (delivered, failed).
func throughput(_ client: CurlHTTPClient, url: String, senders: Int) async -> (Int, Int) {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    return await withTaskGroup(of: (Int, Int).self) { group in
        for _ in 0..<senders {
            group.addTask {
                var ok = 0
                var failed = 0
                while ContinuousClock.now < deadline {
                    let request = HTTPRequest(
                        method: "POST", url: url,
                        headers: [("Content-Type", "application/json")], body: body)
                    if let response = try? await client.send(request), response.status == 204 {
                        ok += 1
                    } else {
                        failed += 1
                    }
                }
                return (ok, failed)
            }
        }
        return await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
    }
}

func latencies(_ client: CurlHTTPClient, url: String, count: Int) async -> [Duration] {
    var samples: [Duration] = []
    samples.reserveCapacity(count)
    for _ in 0..<count {
        let start = ContinuousClock.now
        let request = HTTPRequest(method: "POST", url: url, headers: [("Content-Type", "application/json")], body: body)
        _ = try? await client.send(request)
        samples.append(ContinuousClock.now - start)
    }
    return samples.sorted()
}

/// `1.234 ms`, without Foundation's formatting.
func milliseconds(_ duration: Duration) -> String {
    let micros = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    let fraction = String(micros % 1000)
    return "\(micros / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) ms"
}

try await Receiver.run { port in
    let url = "http://127.0.0.1:\(port)/hook"
    let client = CurlHTTPClient()
    defer { client.shutdown() }
    print("receiver 127.0.0.1:\(port), body \(body.count) bytes, \(seconds) s per run")
    _ = await throughput(client, url: url, senders: 8) // warm-up: connections and allocator caches
    for senders in [1, 8, 32] {
        let (ok, failed) = await throughput(client, url: url, senders: senders)
        print("senders \(senders): \(Int(Double(ok) / seconds)) deliveries/s (\(ok) ok, \(failed) failed)")
    }
    let samples = await latencies(client, url: url, count: 5000)
    let p = { (q: Double) in samples[min(samples.count - 1, Int(Double(samples.count) * q))] }
    print(
        "sequential latency over \(samples.count): p50 \(milliseconds(p(0.5)))  p99 \(milliseconds(p(0.99)))  "
            + "p99.9 \(milliseconds(p(0.999)))  max \(milliseconds(samples.last!))")
}

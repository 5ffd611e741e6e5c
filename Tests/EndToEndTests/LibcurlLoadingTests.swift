import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// libcurl is loaded when a webhook sink first sends, not at start-up (`Sources/CCurl`); the
/// feeds' REST requests go through SwiftNIO. These runs put a `libcurl.so.4` that cannot be
/// loaded first on the library path: a command without webhooks must not notice, and a webhook
/// must fail with a clear error and its usual code.
@Suite("end to end: libcurl is loaded on first use", .programs)
struct LibcurlLoadingTests {
    /// A folder with an empty `libcurl.so.4` (the dynamic loader rejects it: "file too short").
    func brokenLibcurl() throws -> (dir: URL, environment: [String: String]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data().write(to: dir.appendingPathComponent("libcurl.so.4"))
        let rules = """
            {"version": 1, "sinks": {"out": {"type": "stdout", "format": "json"},
                                     "hook": {"type": "webhook", "urlEnv": "HOOK_URL"}},
             "defaults": {"notify": ["out"]},
             "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"above": 100}}}]}
            """
        try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try "{\"time\": 1700000000000, \"symbol\": \"BTC\", \"price\": 101}\n"
            .write(to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        return (dir, ["LD_LIBRARY_PATH": dir.path])
    }

    @Test func aCheckOfATickFileNeverLoadsLibcurl() async throws {
        let (dir, environment) = try brokenLibcurl()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--state", "st"], in: dir,
            environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"rule\":\"btc\""))
        #expect(result.stderr.isEmpty)
    }

    /// The market list, the snapshot and the websocket of a real exchange on 127.0.0.1, all
    /// without libcurl.
    @Test func theDaemonFollowsAnExchangeWithoutLibcurl() async throws {
        let (dir, environment) = try brokenLibcurl()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: 3, interval: .milliseconds(200))))
        let port = try await exchange.start()
        do {
            let daemon = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--state", "st"
                ],
                in: dir, environment: environment)
            _ = try await daemon.waitForStdoutLine(containing: "\"rule\":\"btc\"", timeout: 60)
            kill(daemon.process.processIdentifier, SIGTERM)
            let result = try await daemon.wait(timeout: 60)
            await exchange.stop()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("btse: connected to ws://127.0.0.1:\(port)"), "\(result.stderr)")
            #expect(!result.stderr.contains("libcurl"), "\(result.stderr)")
        } catch {
            await exchange.stop()
            throw error
        }
    }

    @Test func aWebhookSaysLibcurlCannotBeLoaded() async throws {
        let (dir, environment) = try brokenLibcurl()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try await PriceAlertBinary.run(
            ["sinks", "test", "hook", "--rules", "rules.json"], in: dir,
            environment: environment.merging(["HOOK_URL": "http://127.0.0.1:9/hook/tok-123"]) { $1 })
        #expect(result.status == 74)
        #expect(result.stdout.contains("http://127.0.0.1:9/"), "\(result.stdout)")
        #expect(result.stdout.contains("cannot load libcurl"), "\(result.stdout)")
        #expect(result.stdout.contains("libcurl.so.4"), "\(result.stdout)")
        #expect(!(result.stdout + result.stderr).contains("tok-123"))
    }
}

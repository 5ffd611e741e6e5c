import AlertTestSupport
import Foundation
import Testing

/// libcurl is loaded when pricealert first needs HTTP, not at start-up (`Sources/CCurl`). These
/// runs put a `libcurl.so.4` that cannot be loaded first on the library path: a command without
/// HTTP must not notice, and one that needs it must fail with a clear error and its usual code.
@Suite("end to end: libcurl is loaded on first use", .programs)
struct LibcurlLoadingTests {
    /// A folder with an empty `libcurl.so.4` (the dynamic loader rejects it: "file too short").
    func brokenLibcurl() throws -> (dir: URL, environment: [String: String]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data().write(to: dir.appendingPathComponent("libcurl.so.4"))
        let rules = """
            {"version": 1, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
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
            ["check", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--state", "st"], in: dir, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"rule\":\"btc\""))
        #expect(result.stderr.isEmpty)
    }

    @Test func aSourceThatNeedsHTTPSaysLibcurlCannotBeLoaded() async throws {
        let (dir, environment) = try brokenLibcurl()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:9", "--state", "st"],
            in: dir, environment: environment)
        #expect(result.status == 69)
        #expect(result.stderr.contains("btse: http://127.0.0.1:9/"), "\(result.stderr)")
        #expect(result.stderr.contains("cannot load libcurl"), "\(result.stderr)")
        #expect(result.stderr.contains("libcurl.so.4"), "\(result.stderr)")
    }
}

import AlertTestSupport
import Foundation
import Testing

/// `sinks test` (the built binary) against webhook receivers that answer endlessly or slowly.
@Suite("end to end: hostile webhook receivers", .programs)
struct HostileReceiverTests {
    /// Runs `sinks test ops` with a webhook sink at `path`; returns the result and the highest
    /// VmHWM (peak resident KiB) seen in /proc while it ran.
    private func sinksTest(path: String, timeout: String) async throws -> (PriceAlertBinary.Result, peakKiB: Int) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        return try await HostileReceiver.with { port in
            let rules = """
                {"version": 1,
                 "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:\(port)\(path)", "timeout": "\(timeout)"}},
                 "rules": []}
                """
            try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
            let arguments = ["sinks", "test", "ops", "--rules", "rules.json"]
            let running = try PriceAlertBinary.start(arguments, in: dir)
            var peak = 0
            while running.process.isRunning {
                peak = max(peak, Self.highWaterMarkKiB(of: running.process.processIdentifier) ?? 0)
                try await Task.sleep(for: .milliseconds(10))
            }
            return (try await running.wait(timeout: 60), peak)
        }
    }

    /// `VmHWM` of `/proc/PID/status`, nil once the process is gone.
    static func highWaterMarkKiB(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    @Test func anEndlessReplyIsCutAndTheStatusCounts() async throws {
        let (run, peakKiB) = try await sinksTest(path: "/endless", timeout: "20s")
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.hasPrefix("sink 'ops' (webhook): delivered in "))
        #expect(peakKiB < 150 * 1024, "peak resident \(peakKiB) KiB")
    }

    @Test func anEndless503IsRetryable() async throws {
        let (run, peakKiB) = try await sinksTest(path: "/endless?status=503", timeout: "20s")
        #expect(run.status == 74)
        #expect(run.stdout.contains("webhook sink 'ops': HTTP 503 — would retry"), "\(run.stdout)")
        #expect(peakKiB < 150 * 1024, "peak resident \(peakKiB) KiB")
    }

    @Test func aDrippingReplyEndsAtTheTimeout() async throws {
        let (run, _) = try await sinksTest(path: "/drip", timeout: "1s")
        #expect(run.status == 74)
        #expect(run.stdout.contains("timed out"), "\(run.stdout)")
        #expect(run.stdout.hasSuffix("— would retry\n"))
    }
}

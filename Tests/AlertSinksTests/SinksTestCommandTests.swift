import AlertTestSupport
import Foundation
import Testing

/// `pricealert sinks test` run as the built binary against a real receiver.
@Suite("end to end: pricealert sinks test", .programs)
struct SinksTestCommandTests {
    /// `.build/<config>/pricealert`, beside the test bundle.
    static let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("pricealert").path

    static let rules = """
        {
          "version": 1,
          "sinks": {
            "ops": { "type": "webhook", "urlEnv": "OPS_URL", "secretEnv": "OPS_SECRET", "timeout": "20s" },
            "broken": { "type": "webhook", "urlEnv": "OPS_URL_BROKEN" }
          },
          "rules": [ { "id": "r", "symbol": "BTC", "when": { "price": { "above": 1 } }, "notify": ["ops"] } ]
        }
        """

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    func run(_ arguments: [String], environment: [String: String]) async throws -> Run {
        let folder = try temporaryFolder()
        try Self.rules.write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        let result = try await ObservedProcess.run(
            URL(fileURLWithPath: Self.binary), arguments + ["--rules", folder + "/rules.json"],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        return Run(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    @Test func deliveredFailedAndUnknown() async throws {
        try await Receiver.with { receiver, port in
            let base = "http://127.0.0.1:\(port)"
            let ok = try await run(
                ["sinks", "test", "ops"], environment: ["OPS_URL": base + "/hook/tok-123", "OPS_SECRET": "k"])
            #expect(ok.status == 0)
            #expect(ok.stdout.hasPrefix("sink 'ops' (webhook): delivered in "))
            #expect(ok.stdout.hasSuffix(" ms\n"))
            let request = try #require(receiver.requests.first)
            #expect(request.text.contains("\"rule\":\"sinks-test\""))
            #expect(request.text.contains("\"message\":\"pricealert test alert\""))
            #expect(request.headers["webhook-signature"]?.hasPrefix("v1,") == true)

            let retry = try await run(
                ["sinks", "test", "ops"], environment: ["OPS_URL": base + "/status/503/tok-123", "OPS_SECRET": "k"])
            #expect(retry.status == 74)
            #expect(retry.stdout.hasPrefix("sink 'ops' (webhook): failed in "))
            #expect(retry.stdout.hasSuffix(": webhook sink 'ops': HTTP 503 — would retry\n"))
            #expect(receiver.requests.count == 2, "sent once, never retried")

            let permanent = try await run(
                ["sinks", "test", "ops"], environment: ["OPS_URL": base + "/status/404", "OPS_SECRET": "k"])
            #expect(permanent.status == 74)
            #expect(permanent.stdout.hasSuffix(": webhook sink 'ops': HTTP 404 — permanent (not retried)\n"))
            #expect(!(permanent.stdout + permanent.stderr + retry.stdout + ok.stdout).contains("tok-123"))

            let unknown = try await run(["sinks", "test", "nope"], environment: [:])
            #expect(unknown.status == 64)
            #expect(
                unknown.stderr == "pricealert: error: no sink named 'nope'; known sinks: 'broken', 'ops', 'stdout'\n")

            let unset = try await run(["sinks", "test", "broken"], environment: [:])
            #expect(unset.status == 73)
            #expect(unset.stderr.contains("OPS_URL_BROKEN"))
        }
    }
}

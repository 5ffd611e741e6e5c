import AlertHTTP
import AlertModel
import AlertRules
import AlertSinks
import AlertTestSupport
import Foundation
import Platform
import Testing

/// The examples `Docs/sinks.md` points at actually work: the Python verifier accepts a real
/// signed request captured by the receiver, and the exec scripts drive their notifier.
@Suite("docs examples", .programs)
struct DocsExamplesTests {
    init() { ProcessSetUp.atStart() }

    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/examples").path

    /// Runs a program to the end; `input` on stdin. Returns (status, stdout).
    func run(_ argv: [String], environment: [String: String] = [:], input: [UInt8] = []) async throws -> (Int32, String)
    {
        let result = try await ObservedProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), argv,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            input: input)
        return (result.status, result.stdout)
    }

    @Test(arguments: ["plain-secret-value", "whsec_" + Data((1...32).map { UInt8($0) }).base64EncodedString()])
    func pythonVerifierAcceptsARealSignedRequest(secret: String) async throws {
        let alert = sampleAlert()
        let request = try await Receiver.with { receiver, port in
            let spec = WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook/v"), secret: .environment("S"))
            let sink = try WebhookSink(
                name: "ops", spec: spec, client: CurlHTTPClient(), environment: { $0 == "S" ? secret : nil })
            #expect(await sink.send(alert) == .delivered)
            return try #require(receiver.requests.first)
        }
        let args = [
            "python3", Self.examples + "/verify_webhook.py", request.headers["webhook-id"] ?? "",
            request.headers["webhook-timestamp"] ?? "", request.headers["webhook-signature"] ?? ""
        ]
        let valid = try await run(args, environment: ["WEBHOOK_SECRET": secret], input: request.body)
        #expect(valid == (0, "valid\n"))
        let tampered = try await run(args, environment: ["WEBHOOK_SECRET": secret], input: request.body + [0x20])
        #expect(tampered == (1, "INVALID\n"))
        let wrongKey = try await run(args, environment: ["WEBHOOK_SECRET": "x" + secret], input: request.body)
        #expect(wrongKey.0 == 1)
    }

    /// A stand-in for a notifier that records its arguments and standard input.
    func stub(_ name: String, in folder: String) throws {
        let path = folder + "/" + name
        try writeExecutable(
            path,
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"\(folder)/\(name).args\"\ncat > \"\(folder)/\(name).stdin\"\n"
        )
    }

    @Test func notifySendExample() async throws {
        let folder = try temporaryFolder()
        try stub("notify-send", in: folder)
        // `env` sets PATH for the script only: still an argv, no shell.
        let spec = ExecSpec(command: ["/usr/bin/env", "PATH=\(folder):/usr/bin:/bin", Self.examples + "/notify-send.sh"]
        )
        let alert = sampleAlert()
        #expect(try await ExecSink(name: "desktop", spec: spec).send(alert) == .delivered)
        let args = try String(contentsOfFile: folder + "/notify-send.args", encoding: .utf8)
        #expect(args.hasPrefix("--app-name=pricealert\n--urgency=normal\npricealert: btc-100k BTC\n" + alert.message))
    }

    @Test func notifySendMissingIsPermanent() async throws {
        let folder = try temporaryFolder()
        let spec = ExecSpec(command: ["/usr/bin/env", "PATH=\(folder):/usr/bin:/bin", Self.examples + "/notify-send.sh"]
        )
        let result = try await ExecSink(name: "desktop", spec: spec).send(sampleAlert())
        #expect(result == .permanent(reason: "exit 127: notify-send: not found (install libnotify-bin)"))
    }

    @Test func mailExample() async throws {
        let folder = try temporaryFolder()
        try stub("sendmail", in: folder)
        let spec = ExecSpec(command: [
            "/usr/bin/env", "PATH=\(folder):/usr/bin:/bin", Self.examples + "/mail.sh", "oncall@example.com"
        ])
        let alert = sampleAlert()
        #expect(try await ExecSink(name: "mail", spec: spec).send(alert) == .delivered)
        #expect(try String(contentsOfFile: folder + "/sendmail.args", encoding: .utf8) == "-t\n-i\n")
        let mail = try String(contentsOfFile: folder + "/sendmail.stdin", encoding: .utf8)
        #expect(mail.hasPrefix("To: oncall@example.com\nSubject: [pricealert] btc-100k BTC\n"))
        #expect(mail.contains(alert.message))
        #expect(mail.hasSuffix(AlertFormat.json(alert) + "\n"))
    }
}

/// The "Staying calm on a crash day" sink of Docs/sinks.md is `Rules/crash-day.json` word for
/// word, and it validates into the policy the text describes.
@Suite("docs examples: crash day", .programs)
struct CrashDayExampleTests {
    init() { ProcessSetUp.atStart() }

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theDocumentedSinkIsTheShippedFileAndValidates() throws {
        let doc = try String(contentsOf: Self.repo.appendingPathComponent("Docs/sinks.md"), encoding: .utf8)
        let section = try #require(doc.range(of: "## Staying calm on a crash day")).upperBound
        let start = try #require(doc.range(of: "```json\n", range: section..<doc.endIndex)).upperBound
        let end = try #require(doc.range(of: "```", range: start..<doc.endIndex)).lowerBound
        let path = Self.repo.appendingPathComponent("Rules/crash-day.json").path
        #expect(String(doc[start..<end]) == (try String(contentsOfFile: path, encoding: .utf8)))

        let set = try RuleLoader.loadFiles(paths: [path]).get()
        let sink = try #require(set.sinks["calm-telegram"])
        #expect(sink.policy.group == GroupSpec(window: 120_000, by: [.symbol], max: 50))
        #expect(sink.policy.rate == RateSpec(count: 1, per: 1_000))
        #expect(sink.policy.quiet == [QuietWindowSpec(from: 23 * 60, to: 7 * 60, zone: "Europe/Berlin")])
        #expect(sink.policy.quietAction == .hold)
        #expect(sink.policy.fallback == "calm-journal")
        #expect(set.rules.allSatisfy { $0.notify == ["calm-telegram"] })
    }
}

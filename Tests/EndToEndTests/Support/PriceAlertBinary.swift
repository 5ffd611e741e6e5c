import AlertTestSupport
import Foundation
import Testing

/// Runs the `pricealert` binary that `swift build` put beside this test bundle.
struct PriceAlertBinary {
    /// `.build/<config>/pricealert`: the test bundle runs from the same folder.
    static let url: URL = {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("pricealert")
    }()

    /// The repository root (for Samples/, Rules/).
    static let repo = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    typealias Result = ObservedProcess.Result
    typealias Running = ObservedProcess
    typealias TimedOut = ObservedProcess.TimedOut

    /// Runs with `arguments` in `directory`, standard input closed, and waits for it to end.
    /// With `signalAfter`, sends `signal` after that many seconds (SIGTERM as systemd would).
    /// Gives up (killing the process) after `timeout` seconds, so a hung binary fails the test.
    /// Waiting suspends (never blocks a thread), so tests running beside it are not starved.
    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
        signalAfter: TimeInterval? = nil, signal: Int32 = SIGTERM, timeout: TimeInterval = 60
    ) async throws -> Result {
        let running = try start(arguments, in: directory, environment: environment)
        if let signalAfter {
            try await Task.sleep(for: .milliseconds(Int(signalAfter * 1000)))
            kill(running.pid, signal)
        }
        return try await running.wait(timeout: timeout)
    }

    /// Starts the binary and returns at once; both output pipes are drained as it runs.
    static func start(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    ) throws -> Running {
        var env = ProcessInfo.processInfo.environment
        // The default state folder is a fresh one per run, never the user's: a test that wants
        // state kept between runs says --state. It is removed once the process has ended.
        env["STATE_DIRECTORY"] = nil
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("pricealert-xdg-\(UUID().uuidString)").path
        env["XDG_STATE_HOME"] = scratch
        for (k, v) in environment { env[k] = v }
        return try ObservedProcess(url, arguments, in: directory, environment: env) {
            try? FileManager.default.removeItem(atPath: scratch)
        }
    }
}

extension ObservedProcess {
    /// The first line of standard error containing `text`, waiting up to `timeout` seconds.
    func waitForStderrLine(containing text: String, timeout: TimeInterval) async throws -> String {
        try await line(.stderr, containing: text, timeout: timeout)
    }

    /// The port of the status server that `run --listen 127.0.0.1:0` (or `demo`) says it listens
    /// on, waiting up to `timeout` seconds for that line.
    func statusPort(timeout: TimeInterval = 30) async throws -> Int {
        let line = try await waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: timeout)
        let listen = try #require(line.components(separatedBy: "listening on http://127.0.0.1:").last)
        return try #require(Int(listen.prefix { $0.isNumber }))
    }

    /// `http://127.0.0.1:PORT` of that status server.
    func statusBase(timeout: TimeInterval = 30) async throws -> String {
        "http://127.0.0.1:\(try await statusPort(timeout: timeout))"
    }

    /// The first line of standard output containing `text`, waiting up to `timeout` seconds.
    func waitForStdoutLine(containing text: String, timeout: TimeInterval) async throws -> String {
        try await line(.stdout, containing: text, timeout: timeout)
    }
}

import Foundation
import Synchronization

/// Runs the `pricealert` binary that `swift build` put beside this test bundle.
struct PriceAlertBinary {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `.build/<config>/pricealert`: the test bundle runs from the same folder.
    static let url: URL = {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("pricealert")
    }()

    /// The repository root (for Samples/, Rules/).
    static let repo = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs with `arguments` in `directory`, standard input closed, and waits for it to end.
    /// With `signalAfter`, sends `signal` after that many seconds (SIGTERM as systemd would).
    /// Gives up (killing the process) after `timeout` seconds, so a hung binary fails the test.
    /// Waiting suspends (never blocks a thread), so tests running beside it are not starved.
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
                    signalAfter: TimeInterval? = nil, signal: Int32 = SIGTERM, timeout: TimeInterval = 60) async throws -> Result {
        let running = try start(arguments, in: directory, environment: environment)
        if let signalAfter {
            try await Task.sleep(for: .milliseconds(Int(signalAfter * 1000)))
            kill(running.process.processIdentifier, signal)
        }
        return try await running.wait(timeout: timeout, arguments: arguments)
    }

    /// Starts the binary and returns at once; both output pipes are drained as it runs.
    static func start(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> Running {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        // The default state folder is a fresh one per run, never the user's: a test that wants
        // state kept between runs says --state.
        env["STATE_DIRECTORY"] = nil
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("pricealert-xdg-\(UUID().uuidString)").path
        env["XDG_STATE_HOME"] = scratch
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let running = Running(process: process, scratch: scratch)
        process.standardOutput = running.out
        process.standardError = running.err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        running.drain()
        return running
    }

    /// A started process and what it has printed so far.
    final class Running: Sendable {
        let process: Process
        let out = Pipe()
        let err = Pipe()
        private let stdoutData = Mutex(Data())
        private let stderrData = Mutex(Data())
        private let group = DispatchGroup()
        /// The per-run default state folder, removed once the process has ended.
        private let scratch: String

        init(process: Process, scratch: String) {
            self.process = process
            self.scratch = scratch
        }

        fileprivate func drain() {
            for isError in [false, true] {
                group.enter()
                DispatchQueue.global().async { [self] in
                    let handle = (isError ? err : out).fileHandleForReading
                    while true {
                        let chunk = handle.availableData
                        if chunk.isEmpty { break }
                        if isError { stderrData.withLock { $0.append(chunk) } } else { stdoutData.withLock { $0.append(chunk) } }
                    }
                    group.leave()
                }
            }
        }

        var stderr: String { stderrData.withLock { String(decoding: $0, as: UTF8.self) } }
        var stdout: String { stdoutData.withLock { String(decoding: $0, as: UTF8.self) } }

        /// The first line of standard error containing `text`, waiting up to `timeout` seconds.
        func waitForStderrLine(containing text: String, timeout: TimeInterval) async throws -> String {
            try await waitForLine(containing: text, in: \.stderr, timeout: timeout)
        }

        /// The first line of standard output containing `text`, waiting up to `timeout` seconds.
        func waitForStdoutLine(containing text: String, timeout: TimeInterval) async throws -> String {
            try await waitForLine(containing: text, in: \.stdout, timeout: timeout)
        }

        private func waitForLine(containing text: String, in output: KeyPath<Running, String>,
                                 timeout: TimeInterval) async throws -> String {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let line = self[keyPath: output].split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw TimedOut(arguments: process.arguments ?? [])
        }

        /// Sends `signal` and waits for the exit status.
        func stop(signal: Int32) async throws -> Int32 {
            kill(process.processIdentifier, signal)
            return try await wait(timeout: 30, arguments: process.arguments ?? []).status
        }

        func wait(timeout: TimeInterval, arguments: [String]) async throws -> Result {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
            if process.isRunning {
                // SIGKILL, not SIGTERM: a binary that hangs may be ignoring SIGTERM.
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                try? FileManager.default.removeItem(atPath: scratch)
                throw TimedOut(arguments: arguments)
            }
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: scratch)
            // The pipes close when the process ends; wait for the readers without blocking a thread.
            while group.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(5)) }
            return Result(status: process.terminationStatus,
                          stdout: stdoutData.withLock { String(decoding: $0, as: UTF8.self) },
                          stderr: stderr)
        }
    }

    struct TimedOut: Error, CustomStringConvertible {
        var arguments: [String]
        var description: String { "pricealert \(arguments.joined(separator: " ")) did not finish in time" }
    }
}

import Foundation

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

    /// Runs with `arguments` in `directory`, standard input closed, and gives up (killing the
    /// process) after `timeout` seconds so a hung binary fails the test instead of the run.
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
                    timeout: TimeInterval = 60) throws -> Result {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Drain both pipes while it runs, so a large output cannot block it.
        nonisolated(unsafe) var stdoutData = Data(), stderrData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { stdoutData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { stderrData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw TimedOut(arguments: arguments)
        }
        process.waitUntilExit()
        group.wait()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: stdoutData, as: UTF8.self),
                      stderr: String(decoding: stderrData, as: UTF8.self))
    }

    struct TimedOut: Error, CustomStringConvertible {
        var arguments: [String]
        var description: String { "pricealert \(arguments.joined(separator: " ")) did not finish in time" }
    }
}

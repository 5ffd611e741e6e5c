import Foundation
import ParserFuzzing

#if canImport(Glibc)
import Glibc
#endif

/// Runs each parser's batch in a child process and prints one row per parser: inputs, crashes,
/// hangs, the slowest input, the largest, and the child's peak resident memory.
enum ParentRun {
    static func run(_ options: Options) -> Never {
        let names = options.parsers.isEmpty ? FuzzTarget.all.map(\.name) : options.parsers
        say(
            "pricealert-fuzz: seed \(options.seed), inputs \(options.from)..<\(options.from + options.inputs) per parser, hang budget \(options.budgetMilliseconds) ms"
        )
        say(
            "parser                   inputs  seeds  crashes  hangs  slowest (ms, input)  largest input  peak RSS   time"
        )
        var failures = 0
        for name in names {
            FileHandle.standardError.write(
                Data("running \(name): \(options.reproduce(name, from: options.from, inputs: options.inputs))\n".utf8))
            let started = Date()
            let (status, output, peakKiB) = spawnChild(name, options)
            let seconds = Date().timeIntervalSince(started)
            let fields = output.split(separator: "\t").map(String.init)
            let crashed = status.signal != nil
            let hung = status.code == 3
            if crashed || hung || status.code != 0 || fields.count < 7 { failures += 1 }
            let inputs = fields.count >= 7 ? fields[1] : "-"
            let seeds = fields.count >= 7 ? fields[2] : "-"
            let slowest =
                fields.count >= 7 ? String(format: "%.1f, #%@", (Double(fields[4]) ?? 0) * 1000, fields[3]) : "-"
            let largest = fields.count >= 7 ? "\((Int(fields[5]) ?? 0) >> 10) KiB" : "-"
            say(
                [
                    name.padding(toLength: 22, withPad: " ", startingAt: 0),
                    inputs.leftPadded(9), seeds.leftPadded(6), (crashed ? "1" : "0").leftPadded(8),
                    (hung ? "1" : "0").leftPadded(6),
                    slowest.leftPadded(20), largest.leftPadded(14), "\(peakKiB >> 10) MiB".leftPadded(9),
                    String(format: "%.0f s", seconds).leftPadded(6)
                ].joined(separator: " "))
        }
        exit(failures == 0 ? 0 : 1)
    }

    /// Runs `--child --parser name …` and returns its exit, its standard output and its peak RSS.
    private static func spawnChild(
        _ name: String, _ options: Options
    ) -> (status: (code: Int32?, signal: Int32?), output: String, peakKiB: Int) {
        let arguments = [
            "pricealert-fuzz", "--child", "--parser", name, "--seed", String(options.seed),
            "--from", String(options.from), "--inputs", String(options.inputs),
            "--repo", options.repository, "--fixtures", options.fixturesPath,
            "--budget-ms", String(options.budgetMilliseconds)
        ]
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { fail("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/proc/self/exe", &actions, nil, &argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        close(pipe[1])
        guard rc == 0 else { fail("cannot start a child: \(String(cString: strerror(rc)))") }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(pipe[0], &buffer, buffer.count)
            if n <= 0 { break }
            output += buffer[0..<n]
        }
        close(pipe[0])
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
        let signal = status & 0x7F
        let exit: (code: Int32?, signal: Int32?) = signal == 0 ? ((status >> 8) & 0xFF, nil) : (nil, signal)
        return (
            exit, String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
            usage.ru_maxrss
        )
    }
}

/// One line to standard output, unbuffered: each parser's row appears when its batch ends.
private func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

import AlertFeeds
import AlertModel
import AlertPipeline
import AlertRules
import AlertSinks
import AlertTestSupport
import Foundation
import SeededRandom
import Testing

/// `replay` of a file reads, evaluates and lists on threads of their own: what it prints must be
/// exactly what evaluating the file line by line on one thread gives (computed here with the
/// same `Evaluator` and encoder), over a file long enough to cross many hand-offs, and its
/// errors must end the run as they always did.
@Suite("end to end: replay's pipeline lists what one thread would", .programs)
struct ReplayPipelineTests {
    /// 40 000 lines over 12 symbols, with rules that fire tens of thousands of times; a few lines
    /// are not ticks and a few ticks are dropped, spread over the file.
    struct Inputs {
        let dir: URL
        var rules: String { dir.appendingPathComponent("rules.json").path }
        var ticks: String { dir.appendingPathComponent("ticks.jsonl").path }

        init(lines: Int = 40_000) throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "pricealert-pipeline-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            var random = SeededRandom(seed: 15)
            let symbols = (0..<12).map { "S\($0)" }
            var price = symbols.map { _ in 10 * (1 + random.unit() * 100) }
            var rules: [String] = []
            for i in 0..<600 {
                let k = random.below(symbols.count)
                let level = price[k] * random.uniform(0.97...1.03)
                let when =
                    switch i % 5 {
                    case 0: #"{"price": {"crossesAbove": \#(level)}}"#
                    case 1: #"{"price": {"crossesBelow": \#(level)}}"#
                    case 2: #"{"price": {"inside": [\#(level * 0.999), \#(level * 1.001)]}}"#
                    case 3: #"{"price": {"above": \#(level)}}, "hysteresis": 0.1"#
                    default: #"{"change": {"window": "5m", "above": \#(random.uniform(0.1...0.5))}}"#
                    }
                let cooldown = i % 4 == 0 ? #", "cooldown": "1m""# : ""
                rules.append(#"{"id": "rule-\#(i)", "symbol": "\#(symbols[k])", "when": \#(when)\#(cooldown)}"#)
            }
            try Data(#"{"version": 1, "rules": [\#(rules.joined(separator: ",\n"))]}"#.utf8)
                .write(to: URL(fileURLWithPath: self.rules))
            var text = ""
            for n in 0..<lines {
                let k = n % symbols.count
                price[k] *= 1 + random.uniform(-0.002...0.002)
                let time = 1_700_000_000_000 + n * 1_000
                switch n {
                case 7_777: text += #"{"time": \#(time), "symbol": "S1" "price": 1}"# + "\n" // not a tick
                case 12_345: text += #"{"time": \#(time), "symbol": "S2", "price": -1}"# + "\n" // invalid-price
                case 20_000: text += #"{"time": 5, "symbol": "S3", "price": 1}"# + "\n" // out-of-order
                case 30_001: text += "\n" // blank: skipped, but counted for line numbers
                case 33_333: text += "not json\n"
                default: text += #"{"time": \#(time), "symbol": "\#(symbols[k])", "price": \#(price[k])}"# + "\n"
                }
            }
            try Data(text.utf8).write(to: URL(fileURLWithPath: ticks))
        }

        /// What `replay --format FORMAT` prints when each line is evaluated and listed in turn on
        /// one thread: standard output, and standard error's lines.
        func sequential(json: Bool) throws -> (stdout: [UInt8], stderr: [String]) {
            let ruleSet = try RuleLoader.loadFiles(paths: [rules]).get()
            var evaluator = Evaluator(ruleSet: ruleSet, markets: nil)
            var out: [UInt8] = []
            var err: [String] = []
            var alerts: [Alert] = []
            var read = 0
            try TickFileReader(path: ticks).forEachLine { line, parsed in
                read += 1
                switch parsed {
                case .failure(let error):
                    err.append(evaluator.reject(error.message, at: .line(file: ticks, line: line)).description)
                case .success(let tick):
                    if let drop = evaluator.process(tick, at: .line(file: ticks, line: line), into: &alerts) {
                        err.append(drop.description)
                    }
                }
                for alert in alerts {
                    if json { AlertFormat.appendJSON(alert, to: &out) } else { AlertFormat.appendText(alert, to: &out) }
                    out.append(UInt8(ascii: "\n"))
                }
                alerts.removeAll()
            }
            err.append("replay: \(Summary.line(read: read, stats: evaluator.stats))")
            return (out, err)
        }
    }

    @Test(
        "a long replay lists, byte for byte, what one thread evaluating line by line lists; drops are reported in file order",
        arguments: ["json", "text"])
    func sameAsSequential(format: String) async throws {
        let inputs = try Inputs()
        defer { try? FileManager.default.removeItem(at: inputs.dir) }
        let expected = try inputs.sequential(json: format == "json")
        #expect(expected.stdout.count > 1_000_000) // many 64 KiB writes, many batches of alerts

        let result = try await PriceAlertBinary.run([
            "replay", "--format", format, "--rules", inputs.rules, "--ticks", inputs.ticks
        ])
        #expect(result.status == 0)
        #expect(Array(result.stdout.utf8) == expected.stdout)
        let stderr = result.stderr.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(stderr == expected.stderr)
        // The bad line is named at FILE:LINE with its column, and the run goes on past it.
        #expect(stderr.contains("\(inputs.ticks):7778: error: expected ',' or '}' at column 40; line skipped"))
        #expect(stderr.contains { $0.hasPrefix("\(inputs.ticks):12346: dropped: price is not a finite number") })
        #expect(
            stderr.last
                == "replay: 39999 ticks read, 4 dropped (2 malformed, 1 invalid-price, 1 out-of-order), \(expected.stdout.filter { $0 == 10 }.count) alerts"
        )
    }

    @Test(
        "standard output that fails every write (/dev/full) still ends the run as before: every line evaluated, the summary, exit 0"
    )
    func failingStandardOutput() async throws {
        let inputs = try Inputs(lines: 10_000)
        defer { try? FileManager.default.removeItem(at: inputs.dir) }
        let expected = try inputs.sequential(json: true)
        let result = try await ObservedProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", #"exec "$0" replay --format json --rules "$1" --ticks "$2" > /dev/full"#,
                PriceAlertBinary.url.path, inputs.rules, inputs.ticks
            ])
        #expect(result.status == 0)
        #expect(result.stderr.split(separator: "\n").map(String.init) == expected.stderr)
    }

    @Test("a reader that goes away (| head -c) got the listing's first bytes in order; the run still ends with exit 0")
    func readerGoesAway() async throws {
        let inputs = try Inputs()
        defer { try? FileManager.default.removeItem(at: inputs.dir) }
        let expected = try inputs.sequential(json: true)
        let head = inputs.dir.appendingPathComponent("head.jsonl").path
        let result = try await ObservedProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c",
                #"{ "$0" replay --format json --rules "$1" --ticks "$2"; echo "exit $?" >&2; } | head -c 300000 > "$3""#,
                PriceAlertBinary.url.path, inputs.rules, inputs.ticks, head
            ])
        #expect(result.status == 0)
        #expect(result.stderr.contains("\nexit 0\n"))
        let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: head)))
        #expect(received.count == 300_000)
        #expect(received[...] == expected.stdout.prefix(300_000))
    }

    @Test("ticks arriving on a pipe that stays open are listed as they come, not when a batch fills or the pipe ends")
    func pipeStillBeingWritten() async throws {
        let inputs = try Inputs(lines: 10)
        defer { try? FileManager.default.removeItem(at: inputs.dir) }
        try #"{"version": 1, "rules": [{"id": "up", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}}]}"#
            .write(toFile: inputs.rules, atomically: true, encoding: .utf8)
        let fifo = inputs.dir.appendingPathComponent("feed").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let replay = try PriceAlertBinary.start(["replay", "--format", "json", "--rules", inputs.rules, "--ticks", fifo]
        )
        let writer = try await Task.detached { () throws -> FileHandle in
            let handle = try #require(FileHandle(forWritingAtPath: fifo))
            try handle.write(
                contentsOf: Data(
                    """
                    {"time": 1000, "symbol": "BTC", "price": 90}
                    {"time": 2000, "symbol": "BTC", "price": 110}

                    """.utf8))
            return handle
        }.value
        // The writer is still open: the alert must come from the two lines alone.
        let line = try await replay.waitForStdoutLine(containing: #""rule":"up""#, timeout: 60)
        #expect(line.contains(#""id":"up:BTC:2000""#))
        try writer.close()
        let result = try await replay.wait(timeout: 60)
        #expect(result.status == 0)
        #expect(result.stderr.hasSuffix("replay: 2 ticks read, 0 dropped, 1 alert\n"))
    }

    @Test("a tick file that fails to read ends the run as before: the OS error, exit 1, nothing listed")
    func readError() async throws {
        let inputs = try Inputs(lines: 10)
        defer { try? FileManager.default.removeItem(at: inputs.dir) }
        // Opens, and every read(2) of it fails with EIO.
        let result = try await PriceAlertBinary.run(["replay", "--rules", inputs.rules, "--ticks", "/proc/self/mem"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: cannot read /proc/self/mem: Input/output error\n")
        #expect(result.stdout.isEmpty)
    }

    @Test(
        "a tick file that cannot be opened is reported after the rules are loaded: rule errors win (65), then the file (66)"
    )
    func unopenableTicks() async throws {
        let inputs = try Inputs(lines: 10)
        defer { try? FileManager.default.removeItem(at: inputs.dir) }
        let missing = inputs.dir.appendingPathComponent("missing.jsonl").path
        let noTicks = try await PriceAlertBinary.run(["replay", "--rules", inputs.rules, "--ticks", missing])
        #expect(noTicks.status == 66)
        #expect(noTicks.stderr == "pricealert: error: cannot open \(missing): No such file or directory\n")
        #expect(noTicks.stdout.isEmpty)

        let badRules = inputs.dir.appendingPathComponent("bad.json").path
        try Data(#"{"version": 1, "rules": [{"id": "x"}]}"#.utf8).write(to: URL(fileURLWithPath: badRules))
        let both = try await PriceAlertBinary.run(["replay", "--rules", badRules, "--ticks", missing])
        #expect(both.status == 65)
        #expect(!both.stderr.contains("cannot open"))
    }
}

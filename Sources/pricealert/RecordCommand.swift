import AlertFeeds
import AlertHTTP
import AlertModel
import AlertPipeline
import AlertSinks
import ArgumentParser
import Logging

#if canImport(Glibc)
import Glibc
import Platform
#endif

/// `pricealert record`: writes a source's live prices as a tick file (Docs/rules.md#ticks) that
/// `replay` and `check --ticks` read, so rules can be tried on real data.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Write live prices to a replayable tick file.",
        discussion:
            "Appends one JSON line per tick to --out (created 0644). Stops at --duration or SIGINT/SIGTERM. Exit codes: 0 done, 73 the file cannot be opened."
    )

    @OptionGroup var source: SourceOptions
    @OptionGroup var tuning: FeedTuning

    @Option(help: "The tick file to append to (- for standard output).")
    var out: String

    @Option(help: "Stop after this long (e.g. 1h); without it, record until SIGINT/SIGTERM.")
    var duration: DurationArgument?

    func run() async throws {
        Logs.bootstrap()
        let output: StandardOutput
        if out == "-" {
            output = .shared
        } else {
            let fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                StandardError.write("pricealert: error: cannot open \(out): \(String(cString: strerror(errno)))")
                throw ExitCodes.cannotCreate
            }
            output = StandardOutput(fileDescriptor: fd)
        }
        let logger = Logger(label: "pricealert")
        let runner = FeedRunner(
            source: try source.make(), http: NIOHTTPClient.shared, options: tuning.options, logger: logger)
        let limit = duration?.duration
        let written = try await Lifecycle.run(logger: logger) {
            await Lifecycle.limited(to: limit) { await Recorder(runner: runner, output: output).run() }
        }
        StandardError.write("record: \(written) ticks written to \(out)")
    }
}

import AlertFeeds
import AlertModel
import AlertReport
import Platform

/// `replay` (Docs/cli.md): a recorded tick file through the `Evaluator` that `check` and `run`
/// share, every alert listed on standard output in tick order and, with a delivery, dispatched.
/// Bad lines and dropped ticks are reported on standard error at FILE:LINE and counted; nothing
/// here reads a clock, so the same ticks give the same alerts every time.
public struct ReplayRun {
    public var evaluator: Evaluator
    /// The tick file as named on the command line (`-`: standard input), for the places of bad
    /// lines and drops.
    public var file: String
    /// How alerts are listed, and the delivery they are dispatched to (nil: listed only).
    public var listing: AlertListing
    /// Lines read before the ticks (`--history`): counted with the ticks in the summary.
    public var read: Int

    public struct Outcome: Sendable {
        /// Lines read, history included.
        public var read: Int
        /// Deliveries that failed or still wait in the outbox.
        public var failures: Int
        /// The read error that ended the tick file early: everything read before it was listed
        /// and dispatched.
        public var readFailure: InputFileError?
    }

    public init(evaluator: Evaluator, file: String, listing: AlertListing, read: Int = 0) {
        self.evaluator = evaluator
        self.file = file
        self.listing = listing
        self.read = read
    }

    /// Evaluates every tick `reader` gives, in order. `report` (`--report`) gets each evaluated
    /// tick and alert. Without a delivery, a thread of its own encodes and writes the listing's
    /// lines while this one evaluates; with one, a task takes the alerts in order and waits for
    /// each delivery to be handed over, and what the policy stages still keep is closed at the end.
    public mutating func run(_ reader: TickReadAhead, report: inout ReplayReport?) async -> Outcome {
        let listing = self.listing
        let dispatcher = listing.dispatcher
        let writer =
            dispatcher == nil
            ? ListingWriter(
                writeBytes: AlertListing.batchBytes, encode: listing.appendLine,
                write: { StandardOutput.shared.write(lines: $0) })
            : nil
        let handOver = dispatcher.map { _ in AsyncStream.makeStream(of: Alert.self) }
        let consumer = handOver.map { handOver in Task { await listing.consume(handOver.stream) } }
        var readFailure: InputFileError?
        let file = self.file
        while let batch = reader.next() {
            var alerts: [Alert] = []
            for (line, result) in batch.lines {
                read += 1
                switch result {
                case .failure(let error):
                    StandardError.write(evaluator.reject(error.message, at: .line(file: file, line: line)).description)
                case .success(let tick):
                    let start = alerts.count
                    if let drop = evaluator.process(tick, at: .line(file: file, line: line), into: &alerts) {
                        StandardError.write(drop.description)
                    } else {
                        report?.add(tick)
                    }
                    if report != nil {
                        for alert in alerts[start...] { report?.add(alert) }
                    }
                }
            }
            writer?.send(alerts)
            if let handOver { for alert in alerts { handOver.continuation.yield(alert) } }
            readFailure = batch.failure
        }
        // Everything read before a read error is listed (and dispatched) before the run ends with it.
        writer?.finish()
        handOver?.continuation.finish()
        var failures = await consumer?.value ?? 0
        failures += await dispatcher?.closeAll() ?? 0
        failures += await dispatcher?.finish(timeout: .seconds(30)) ?? 0
        return Outcome(read: read, failures: failures, readFailure: readFailure)
    }
}

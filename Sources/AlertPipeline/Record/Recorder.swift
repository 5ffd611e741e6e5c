import AlertFeeds
import AlertModel
import Platform

/// `record` (Docs/cli.md): follows the feed and writes every tick, one JSON line each, as it
/// comes; other feed events are logged.
public struct Recorder: Sendable {
    public let runner: FeedRunner
    public let output: StandardOutput

    public init(runner: FeedRunner, output: StandardOutput) {
        self.runner = runner
        self.output = output
    }

    /// Returns the number of ticks written, once the feed's events end (on cancellation,
    /// after the feed has finished them).
    public func run() async -> Int {
        let runner = self.runner
        let (events, feed) = runner.start()
        // The writer is not cancelled with us: it writes everything the feed yielded until the
        // feed, cancelled, finishes the stream. No recorded tick is lost on Ctrl-C.
        let output = self.output
        let writer = Task {
            var written = 0
            for await event in events {
                switch event {
                case .ticks(let ticks):
                    output.writeLine(ticks.map(TickFormat.json).joined(separator: "\n"))
                    written += ticks.count
                default:
                    event.log(source: runner.source.name, to: runner.logger)
                }
            }
            return written
        }
        return await withTaskCancellationHandler {
            await writer.value
        } onCancel: {
            feed.cancel()
        }
    }
}

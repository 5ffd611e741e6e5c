import AlertFeeds
import Daemon
import ServiceLifecycle

/// The feed as a service: runs the `FeedRunner` (market list, then live prices) and hands each
/// event to the evaluator's inbox, in order. Graceful shutdown stops the feed first (`STOPPING=1`,
/// `/healthz` says so); the inbox is finished once the feed has stopped, so the evaluator sees
/// every event the feed gave. A feed that ends by itself (a fatal error, logged by the runner)
/// ends the same way, and the group shuts down behind it.
final class FeedService: Service {
    let runner: FeedRunner
    let monitor: PipelineMonitor
    /// The status systemd and `/healthz` show while the pipeline drains.
    let stopping: String
    let inbox: AsyncStream<EvaluatorInput>.Continuation

    init(runner: FeedRunner, monitor: PipelineMonitor, stopping: String, inbox: AsyncStream<EvaluatorInput>.Continuation) {
        self.runner = runner
        self.monitor = monitor
        self.stopping = stopping
        self.inbox = inbox
    }

    func run() async {
        let (events, feed) = runner.start()
        let (monitor, stopping, inbox) = (self.monitor, self.stopping, self.inbox)
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                for await event in events { inbox.yield(.feed(event)) }
            } onGracefulShutdown: {
                monitor.shutdownBegan(status: stopping)
                feed.cancel()
            }
        } onCancel: {
            feed.cancel()
        }
        monitor.shutdownBegan(status: stopping)
        inbox.finish()
    }
}
